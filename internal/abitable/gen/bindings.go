package main

import (
	"fmt"
	"strings"

	"github.com/kwire/kwire/internal/abitable"
)

// The bindings' view of the table: every constant as KW_<name>, the category of each
// status, and the names of the exports a module or library must have.

// A binding spells those lists in one language. The fields are formats or text written
// in this order: head (takes note), one constant (strConst: name, string, its length;
// intConst: name, value), the opening of the status categories, one category (value,
// category), the text between them and the export list, one export (name), and end.
type binding struct {
	head, strConst, intConst string
	categories, category     string
	exports, export, end     string
}

var (
	jsBinding = binding{
		head:       "// %s\n// The ABI's constants (capi/kwire.h) and the exports a module must have.\n\n",
		strConst:   "export const KW_%[1]s = %[2]q;\n",
		intConst:   "export const KW_%s = %d;\n",
		categories: "\n/** The category kw_last_error_json names for each status. */\nexport const STATUS_CATEGORIES = Object.freeze(new Map([\n",
		category:   "  [%d, '%s'],\n",
		exports:    "]));\n\n/** Every kw_ function of the ABI, in the order of kwire.h. */\nexport const EXPORTS = Object.freeze([\n",
		export:     "  '%s',\n",
		end:        "]);\n",
	}
	pyBinding = binding{
		head:       "# %s\n\"\"\"The ABI's constants (capi/kwire.h) and the exports a module must have.\"\"\"\n\n",
		strConst:   "KW_%[1]s = b%[2]q\n",
		intConst:   "KW_%s = %d\n",
		categories: "\n# The category kw_last_error_json names for each status.\nSTATUS_CATEGORIES = {\n",
		category:   "    %d: %q,\n",
		exports:    "}\n\n# Every kw_ function of the ABI, in the order of kwire.h.\nEXPORTS = (\n",
		export:     "    %q,\n",
		end:        ")\n",
	}
	rustBinding = binding{
		head:       "// %s\n//! The ABI's constants (capi/kwire.h) and the functions the library must have.\n\n",
		strConst:   "pub const KW_%[1]s: &[u8; %[3]d] = b%[2]q;\n",
		intConst:   "pub const KW_%s: i32 = %d;\n",
		categories: "\n/// The category `kw_last_error_json` names for each status.\npub const STATUS_CATEGORIES: &[(i32, &str)] = &[\n",
		category:   "    (%d, %q),\n",
		exports:    "];\n\n/// Every `kw_` function of the ABI, in the order of kwire.h.\npub const EXPORTS: &[&str] = &[\n",
		export:     "    %q,\n",
		end:        "];\n",
	}
)

func (s binding) gen() string {
	var b strings.Builder
	fmt.Fprintf(&b, s.head, note)
	for _, c := range abitable.Consts {
		if c.Str != "" {
			fmt.Fprintf(&b, s.strConst, c.Name, c.Str, len(c.Str))
		} else {
			fmt.Fprintf(&b, s.intConst, c.Name, c.Value)
		}
	}
	b.WriteString(s.categories)
	for _, c := range abitable.Group("status") {
		fmt.Fprintf(&b, s.category, c.Value, c.Category)
	}
	b.WriteString(s.exports)
	for _, n := range abitable.ExportNames() {
		fmt.Fprintf(&b, s.export, n)
	}
	b.WriteString(s.end)
	return b.String()
}

// genPy adds to the Python binding the ABI minor version that added each export.
func genPy() string {
	var b strings.Builder
	b.WriteString(pyBinding.gen())
	b.WriteString("\n# The ABI minor version that added each export: 0 for those every 1.x module has.\nSINCE = {\n")
	for _, e := range abitable.Exports {
		fmt.Fprintf(&b, "    %q: %d,\n", e.Name, e.Since)
	}
	b.WriteString("}\n")
	return b.String()
}
