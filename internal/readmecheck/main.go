// Command readmecheck compiles or runs the code blocks of kwire's READMEs, so that
// every snippet a reader copies works as written (`make readme-test`, part of
// `make test`).
//
// The rule, by a fenced block's language (the word after the opening fence):
//
//   - go: a whole file (it starts with a package clause). It is compiled with
//     `go vet` inside the module; a `package main` is not run (conn's needs a
//     broker).
//   - js: a whole ES module. `node --check`, then run with the repository root as
//     working directory; `import ... from 'kwire'` resolves to bindings/js.
//   - python: compiled, then run with bindings/python's venv, from the repository root.
//   - c: a whole translation unit with main. Compiled and linked through
//     `PKG_CONFIG_PATH=build pkg-config --cflags --libs kwire`, as the C README says,
//     then run (no LD_LIBRARY_PATH: the .pc records the run path).
//   - rust: run by `cargo test` as doc tests (the crate includes its README as
//     documentation); this command checks that the crate still does.
//   - sh, console, text, json: commands, output and data. Not run.
//
// A block of any other language, or with none, is an error: say what it is. A block
// preceded by the line `<!-- snippet: compile-only -->` (for one that needs a broker
// or a value it cannot have) is compiled, not run. Blocks run with a time limit of
// 60 seconds each (Go's compiles, 10 minutes).
//
// Install recipes: an sh block preceded by `<!-- snippet: install -->` is a binding's
// install recipe, run as a new user would run it: by bash (-euo pipefail) in a new
// empty folder outside the checkout, with KWIRE_SRC naming the checkout and an
// environment stripped of what points into it (no virtual environment on PATH, no
// KWIRE_WASM, KWIRE_LIB_DIR, PKG_CONFIG_PATH, PYTHONPATH or NODE_PATH). Package managers
// work offline there: pip from bindings/python/.venv/wheelhouse, npm and cargo from
// their caches. A recipe ends by using what it installed, so exit status 0 means the
// package works; each distinct recipe runs once, with a time limit of 15 minutes.
// -recipes FILE (the root README) names a README whose install recipes must be exactly
// those of the other READMEs, each recipe written the same in both places; its other
// blocks are not checked.
//
// Usage: go run ./internal/readmecheck [-build dir] [-recipes README.md] README.md...
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

type block struct {
	file        string
	line        int
	lang        string
	text        string
	compileOnly bool
	install     bool
}

const (
	compileOnlyMarker = "<!-- snippet: compile-only -->"
	installMarker     = "<!-- snippet: install -->"
)

var notRun = map[string]bool{"sh": true, "console": true, "text": true, "json": true}

func main() {
	build := flag.String("build", "build", "scratch folder (the snippets are written under <build>/_readme)")
	recipes := flag.String("recipes", "", "a README whose install recipes must be those of the others (its other blocks are not checked)")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	scratch := filepath.Join(root, *build, "_readme")
	_ = os.RemoveAll(scratch)
	var blocks []block
	for _, f := range flag.Args() {
		bs, err := extract(f)
		if err != nil {
			fail(err)
		}
		blocks = append(blocks, bs...)
	}
	failed := 0
	if *recipes != "" {
		bs, err := extract(*recipes)
		if err != nil {
			fail(err)
		}
		for _, problem := range sameRecipes(bs, blocks) {
			failed++
			fmt.Println("FAIL", problem)
		}
	}
	counts := map[string]int{}
	ran := map[string]string{} // recipe text -> where it ran first
	for i, b := range blocks {
		if b.install {
			if where, ok := ran[b.text]; ok {
				fmt.Printf("install recipe %s:%d: the same as %s\n", b.file, b.line, where)
				counts["install recipe"]++
				continue
			}
			ran[b.text] = fmt.Sprintf("%s:%d", b.file, b.line)
		}
		what, err := check(root, scratch, i, b)
		if err != nil {
			failed++
			fmt.Printf("FAIL %s:%d (%s): %v\n", b.file, b.line, b.lang, err)
			continue
		}
		counts[what]++
	}
	var parts []string
	for _, k := range []string{"install recipe", "run", "compiled", "doc test", "not code"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	fmt.Printf("readme snippets: %d blocks in %d READMEs: %s; %d failed\n", len(blocks), flag.NArg(), strings.Join(parts, ", "), failed)
	if failed > 0 || len(blocks) == 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "readmecheck:", err)
	os.Exit(1)
}

var fence = regexp.MustCompile("^(```+)\\s*([A-Za-z0-9_+-]*)")

// extract returns the fenced blocks of a Markdown file.
func extract(path string) ([]block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []block
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *block
	var body strings.Builder
	closing, prev := "", ""
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if cur != nil {
			if strings.TrimSpace(line) == closing {
				cur.text = body.String()
				out = append(out, *cur)
				cur = nil
			} else {
				body.WriteString(line + "\n")
			}
			continue
		}
		if m := fence.FindStringSubmatch(line); m != nil {
			cur = &block{file: path, line: n, lang: m[2], compileOnly: strings.TrimSpace(prev) == compileOnlyMarker,
				install: strings.TrimSpace(prev) == installMarker}
			closing = m[1]
			body.Reset()
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a code block is not closed", path, cur.line)
	}
	return out, sc.Err()
}

func check(root, scratch string, i int, b block) (string, error) {
	lang := b.lang
	if lang == "javascript" || lang == "mjs" {
		lang = "js"
	}
	if lang == "shell" || lang == "bash" {
		lang = "sh"
	}
	if b.install {
		if lang != "sh" {
			return "", fmt.Errorf("an install recipe is an sh block, not %q", b.lang)
		}
		start := time.Now()
		if err := runRecipe(root, b.text); err != nil {
			return "", err
		}
		fmt.Printf("install recipe %s:%d ran in %v\n", b.file, b.line, time.Since(start).Round(time.Second))
		return "install recipe", nil
	}
	if notRun[lang] {
		return "not code", nil
	}
	name := fmt.Sprintf("%s-%d", strings.NewReplacer("/", "_", ".", "_").Replace(b.file), b.line)
	dir := filepath.Join(scratch, name)
	switch lang {
	case "":
		return "", fmt.Errorf("the block has no language: give it one (sh, text, go, js, python, c, rust, ...)")
	case "go":
		if !regexp.MustCompile(`(?m)^package \w+`).MatchString(b.text) {
			return "", fmt.Errorf("a Go block must be a whole file (start with a package clause)")
		}
		if err := write(dir, "snippet.go", b.text); err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, dir)
		return "compiled", run(root, "go", "vet", "./"+filepath.ToSlash(rel))
	case "js":
		// Inside the package (bindings/js/.readme, removed afterwards), so that 'kwire'
		// resolves to the package itself by its name.
		jsdir := filepath.Join(root, "bindings", "js", ".readme")
		defer os.RemoveAll(jsdir)
		p := filepath.Join(jsdir, name+".mjs")
		if err := write(jsdir, name+".mjs", b.text); err != nil {
			return "", err
		}
		if err := run(root, "node", "--check", p); err != nil {
			return "", err
		}
		if b.compileOnly {
			return "compiled", nil
		}
		return "run", run(root, "node", p)
	case "python":
		py := filepath.Join(root, "bindings", "python", ".venv", "bin", "python")
		if err := write(dir, "snippet.py", b.text); err != nil {
			return "", err
		}
		p := filepath.Join(dir, "snippet.py")
		if err := run(root, py, "-m", "py_compile", p); err != nil {
			return "", err
		}
		if b.compileOnly {
			return "compiled", nil
		}
		return "run", run(root, py, p)
	case "c":
		if !strings.Contains(b.text, "main(") {
			return "", fmt.Errorf("a C block must be a whole program (with main)")
		}
		if err := write(dir, "snippet.c", b.text); err != nil {
			return "", err
		}
		flags, err := exec.Command("sh", "-c", "PKG_CONFIG_PATH="+filepath.Join(root, "build")+" pkg-config --cflags --libs kwire").Output()
		if err != nil {
			return "", fmt.Errorf("pkg-config kwire (PKG_CONFIG_PATH=build): %v", err)
		}
		bin := filepath.Join(dir, "snippet")
		args := append([]string{"-std=c11", "-Wall", "-Werror", "-o", bin, filepath.Join(dir, "snippet.c")}, strings.Fields(string(flags))...)
		if err := run(root, "cc", args...); err != nil {
			return "", err
		}
		if b.compileOnly {
			return "compiled", nil
		}
		return "run", run(root, bin)
	case "rust":
		lib, err := os.ReadFile(filepath.Join(root, "bindings", "rust", "src", "lib.rs"))
		if err != nil {
			return "", err
		}
		if filepath.ToSlash(b.file) != "bindings/rust/README.md" || !bytes.Contains(lib, []byte(`#[doc = include_str!("../README.md")]`)) {
			return "", fmt.Errorf("rust blocks run as doc tests of bindings/rust (its lib.rs includes its README); this one is not there")
		}
		return "doc test", nil
	}
	return "", fmt.Errorf("language %q: nothing knows how to check it (use text for output)", b.lang)
}

func write(dir, name, text string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
}

func run(dir, name string, args ...string) error {
	limit := 60 * time.Second
	if name == "go" {
		limit = 10 * time.Minute // the first vet of a package compiles codec's generated code
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		text := strings.TrimSpace(out.String())
		if len(text) > 2000 {
			text = text[:2000] + "..."
		}
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, text)
	}
	return nil
}

// sameRecipes compares the install recipes of the -recipes README with those of the
// others: each must be written, the same, in both.
func sameRecipes(catalogue, others []block) []string {
	have := map[string]bool{}
	for _, b := range others {
		if b.install {
			have[b.text] = true
		}
	}
	listed := map[string]bool{}
	var problems []string
	for _, b := range catalogue {
		if !b.install {
			continue
		}
		listed[b.text] = true
		if !have[b.text] {
			problems = append(problems, fmt.Sprintf("%s:%d: this install recipe is in no binding's README as it is written here", b.file, b.line))
		}
	}
	for _, b := range others {
		if b.install && !listed[b.text] {
			problems = append(problems, fmt.Sprintf("%s:%d: this install recipe is not in the README that lists them all, as it is written here", b.file, b.line))
		}
	}
	if len(listed) == 0 {
		problems = append(problems, "the README given with -recipes has no install recipe")
	}
	return problems
}

// runRecipe runs an install recipe in a new folder outside the checkout, as a new user
// would: see the package comment.
func runRecipe(root, text string) error {
	dir, err := os.MkdirTemp("", "kwire-recipe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", text)
	cmd.Dir = dir
	cmd.Env = recipeEnv(root, os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tail := strings.TrimSpace(out.String())
		if len(tail) > 4000 {
			tail = "..." + tail[len(tail)-4000:]
		}
		return fmt.Errorf("install recipe (run in a new folder, KWIRE_SRC=%s): %v\n%s", root, err, tail)
	}
	return nil
}

// recipeEnv is env without what points into the checkout or into a virtual environment,
// with KWIRE_SRC and the package managers' offline settings.
func recipeEnv(root string, env []string) []string {
	drop := map[string]bool{"VIRTUAL_ENV": true, "PYTHONPATH": true, "PYTHONHOME": true, "KWIRE_WASM": true,
		"KWIRE_LIB_DIR": true, "KWIRE_NO_MAKE": true, "PKG_CONFIG_PATH": true, "NODE_PATH": true,
		"CARGO_TARGET_DIR": true, "KWIRE_SRC": true}
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if drop[k] || strings.HasPrefix(k, "PIP_") || strings.HasPrefix(strings.ToLower(k), "npm_config_") {
			continue
		}
		if k == "PATH" {
			var keep []string
			for _, p := range filepath.SplitList(v) {
				if p != "" && !strings.HasPrefix(p+string(filepath.Separator), root+string(filepath.Separator)) &&
					!strings.Contains(p, string(filepath.Separator)+".venv"+string(filepath.Separator)) {
					keep = append(keep, p)
				}
			}
			kv = "PATH=" + strings.Join(keep, string(filepath.ListSeparator))
		}
		out = append(out, kv)
	}
	return append(out, "KWIRE_SRC="+root,
		"PIP_NO_INDEX=1", "PIP_FIND_LINKS="+filepath.Join(root, "bindings", "python", ".venv", "wheelhouse"),
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1",
		"npm_config_offline=true", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false",
		"CARGO_NET_OFFLINE=true")
}
