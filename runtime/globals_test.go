package runtime

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/typegen"
)

// declaredGlobal finds the global values a .d.ts declares: `declare var X`,
// `declare function X`, `declare (abstract) class X`, `declare namespace X`,
// and `var X:` inside a `declare global` block.
var declaredGlobal = regexp.MustCompile(`(?m)^(?:declare (?:var|let|const|function|namespace|class|abstract class) ([A-Za-z_$][\w$]*)|\s+var ([A-Za-z_$][\w$]*):)`)

func declaredIn(dts string) map[string]bool {
	out := map[string]bool{}
	for _, m := range declaredGlobal.FindAllStringSubmatch(dts, -1) {
		out[m[1]+m[2]] = true
	}
	return out
}

// TestGlobalsDeclaredForTypeScript: typegen.Globals, the .d.ts a snippet's
// globals are declared in, declares each global of the registry except
// those TypeScript's own lib declares and the refusals, and nothing else
// but what a run binds.
func TestGlobalsDeclaredForTypeScript(t *testing.T) {
	declared := declaredIn(typegen.Globals)
	boundByRun := map[string]bool{"sandbox": true} // bindings.InstallServices
	registry := map[string]bool{}
	for _, g := range Globals() {
		registry[g.Name] = true
		switch {
		case g.Refusal && declared[g.Name]:
			t.Errorf("%s only refuses (family %s): typegen.Globals must leave it out, so tsc says \"Cannot find name\"", g.Name, g.Family)
		case g.InLib && declared[g.Name]:
			t.Errorf("%s is declared by TypeScript's lib (family %s): typegen.Globals must not declare it again", g.Name, g.Family)
		case !g.Refusal && !g.InLib && !declared[g.Name]:
			t.Errorf("%s (family %s) is not declared in typegen.Globals: declare it as the runtime implements it", g.Name, g.Family)
		}
	}
	for name := range declared {
		if !registry[name] && !boundByRun[name] {
			t.Errorf("typegen.Globals declares %s, which the runtime does not install (runtime/globals.go)", name)
		}
	}
	if len(declared) < 10 {
		t.Fatalf("found only %d declarations in typegen.Globals: %v", len(declared), declared)
	}
}

// TestGlobalsInLibAreDeclaredByTypeScript: each global the registry says TypeScript's
// lib declares is declared by the lib files of typegen.GlobalsLib (and the
// files they reference) of the installed TypeScript.
func TestGlobalsInLibAreDeclaredByTypeScript(t *testing.T) {
	libs, _ := filepath.Glob(filepath.Join(testpeers.NodeModules(t), "@typescript", "*", "lib"))
	if len(libs) == 0 {
		testpeers.Package(t, "@typescript/typescript-linux-x64") // skips or fails with the install hint
		t.Fatal("no TypeScript lib folder found")
	}
	declared := map[string]bool{}
	seen := map[string]bool{}
	var read func(lib string)
	read = func(lib string) {
		if seen[lib] {
			return
		}
		seen[lib] = true
		data, err := os.ReadFile(filepath.Join(libs[0], "lib."+lib+".d.ts"))
		if err != nil {
			t.Fatalf("lib %q: %v", lib, err)
		}
		for name := range declaredIn(string(data)) {
			declared[name] = true
		}
		for _, m := range regexp.MustCompile(`/// <reference lib="([^"]+)" />`).FindAllStringSubmatch(string(data), -1) {
			read(m[1])
		}
	}
	for _, lib := range typegen.GlobalsLib {
		read(lib)
	}
	var inLib []string
	for _, g := range Globals() {
		if g.InLib {
			inLib = append(inLib, g.Name)
			if !declared[g.Name] {
				t.Errorf("%s (family %s) is marked InLib, but lib %s does not declare it", g.Name, g.Family, strings.Join(typegen.GlobalsLib, ","))
			}
		}
	}
	sort.Strings(inLib)
	if len(inLib) == 0 || declared["fetch"] || !declared["Map"] {
		t.Fatalf("the lib check is not reading what it should: InLib %v, lib declares fetch %v, Map %v", inLib, declared["fetch"], declared["Map"])
	}
}
