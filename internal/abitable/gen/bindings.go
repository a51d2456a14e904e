package main

import (
	"fmt"
	"strings"

	"github.com/kwire/kwire/internal/abitable"
)

// The bindings' view of the table: every constant as KW_<name>, the category of each
// status, and the names of the exports a module or library must have.

func genJS() string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n// The ABI's constants (capi/kwire.h) and the exports a module must have.\n\n", note)
	for _, c := range abitable.Consts {
		if c.Str != "" {
			fmt.Fprintf(&b, "export const KW_%s = %q;\n", c.Name, c.Str)
		} else {
			fmt.Fprintf(&b, "export const KW_%s = %d;\n", c.Name, c.Value)
		}
	}
	b.WriteString("\n/** The category kw_last_error_json names for each status. */\nexport const STATUS_CATEGORIES = Object.freeze(new Map([\n")
	for _, c := range abitable.Group("status") {
		fmt.Fprintf(&b, "  [%d, '%s'],\n", c.Value, c.Category)
	}
	b.WriteString("]));\n\n/** Every kw_ function of the ABI, in the order of kwire.h. */\nexport const EXPORTS = Object.freeze([\n")
	for _, n := range abitable.ExportNames() {
		fmt.Fprintf(&b, "  '%s',\n", n)
	}
	b.WriteString("]);\n")
	return b.String()
}

func genPy() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\"\"\"The ABI's constants (capi/kwire.h) and the exports a module must have.\"\"\"\n\n", note)
	for _, c := range abitable.Consts {
		if c.Str != "" {
			fmt.Fprintf(&b, "KW_%s = b%q\n", c.Name, c.Str)
		} else {
			fmt.Fprintf(&b, "KW_%s = %d\n", c.Name, c.Value)
		}
	}
	b.WriteString("\n# The category kw_last_error_json names for each status.\nSTATUS_CATEGORIES = {\n")
	for _, c := range abitable.Group("status") {
		fmt.Fprintf(&b, "    %d: %q,\n", c.Value, c.Category)
	}
	b.WriteString("}\n\n# Every kw_ function of the ABI, in the order of kwire.h.\nEXPORTS = (\n")
	for _, n := range abitable.ExportNames() {
		fmt.Fprintf(&b, "    %q,\n", n)
	}
	b.WriteString(")\n\n# The ABI minor version that added each export: 0 for those every 1.x module has.\nSINCE = {\n")
	for _, e := range abitable.Exports {
		fmt.Fprintf(&b, "    %q: %d,\n", e.Name, e.Since)
	}
	b.WriteString("}\n")
	return b.String()
}

func genRust() string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n//! The ABI's constants (capi/kwire.h) and the functions the library must have.\n\n", note)
	for _, c := range abitable.Consts {
		if c.Str != "" {
			fmt.Fprintf(&b, "pub const KW_%s: &[u8; %d] = b%q;\n", c.Name, len(c.Str), c.Str)
		} else {
			fmt.Fprintf(&b, "pub const KW_%s: i32 = %d;\n", c.Name, c.Value)
		}
	}
	b.WriteString("\n/// The category `kw_last_error_json` names for each status.\npub const STATUS_CATEGORIES: &[(i32, &str)] = &[\n")
	for _, c := range abitable.Group("status") {
		fmt.Fprintf(&b, "    (%d, %q),\n", c.Value, c.Category)
	}
	b.WriteString("];\n\n/// Every `kw_` function of the ABI, in the order of kwire.h.\npub const EXPORTS: &[&str] = &[\n")
	for _, n := range abitable.ExportNames() {
		fmt.Fprintf(&b, "    %q,\n", n)
	}
	b.WriteString("];\n")
	return b.String()
}
