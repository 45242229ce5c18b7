package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// Every example snippet passes `sandbox check` against the live tools of
// the servers it calls (hello.ts calls none, and is checked without a
// config as the README's first steps do).
func TestCheckPassesEveryExample(t *testing.T) {
	tsc := testpeers.Bin(t, "tsc")
	examples, err := filepath.Glob("../../examples/*.ts")
	if err != nil || len(examples) < 5 {
		t.Fatalf("examples: %v %v", examples, err)
	}
	cfg := writeConfig(t, twoServersConfig(t))
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			r := runCLI(t, "", "check", ex, "-c", cfg, "--tsc", tsc)
			if r.code != 0 || r.stdout != "" {
				t.Fatalf("%+v", r)
			}
		})
	}
	if r := runCLI(t, "", "check", "../../examples/hello.ts", "--tsc", tsc); r.code != 0 {
		t.Fatalf("hello.ts without a config: %+v", r)
	}
}

// A type error is reported at its line and column in the user's file, not
// in the function check wraps it in; so is one on the first line, and a
// tool called with the wrong arguments (a multi-line diagnostic).
func TestCheckLocatesErrorsInTheUsersFile(t *testing.T) {
	tsc := testpeers.Bin(t, "tsc")
	cfg := writeConfig(t, `{"mcpServers": {"demo": {"command": "`+exampleServerBinary(t)+`"}}}`)
	snippet := writeScript(t, "bad.ts", `const n: number = "one";
const projects = await demo.listProjects({ status: "active" });
  const wrong = await demo.listProjects({ status: 42 });
return fetch("https://example.com");
`)
	r := runCLI(t, "", "check", snippet, "-c", cfg, "--tsc", tsc)
	if r.code != exitFailed || !strings.Contains(r.stderr, "check: 3 type errors in "+snippet) {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{
		snippet + ":1:7: error TS2322: Type 'string' is not assignable to type 'number'.",
		snippet + ":3:43: error TS2322: Type 'number' is not assignable to type",
		snippet + ":4:8: error TS2304: Cannot find name 'fetch'.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if regexp.MustCompile(`snippet\.ts|__sandboxSnippet`).MatchString(r.stdout) {
		t.Errorf("the wrapper shows through:\n%s", r.stdout)
	}
	// Top-level await and return are fine; so is input, a saved script's
	// arguments.
	ok := writeScript(t, "ok.ts", "const a = await Promise.resolve(input?.n ?? 1);\nif (a > 1) return a;\nreturn -a;\n")
	if r := runCLI(t, "", "check", ok, "--tsc", tsc); r.code != 0 {
		t.Fatalf("%+v", r)
	}
}

// Without a TypeScript compiler, check says how to install one.
func TestCheckWithoutTSC(t *testing.T) {
	snippet := writeScript(t, "a.ts", "return 1")
	r := runCLIIn(t, t.TempDir(), []string{"PATH=" + t.TempDir()}, "check", snippet)
	if r.code != exitUsage || !strings.Contains(r.stderr, "no TypeScript compiler: tsc is not on PATH. Install it with `npm install -g typescript`") {
		t.Fatalf("%+v", r)
	}
	r = runCLIIn(t, t.TempDir(), nil, "check", snippet, "--tsc", "/nonexistent/tsc")
	if r.code != exitUsage || !strings.Contains(r.stderr, "check: --tsc /nonexistent/tsc:") {
		t.Fatalf("%+v", r)
	}
}

// The tsconfig docs/cli.md gives editors is the one check uses.
func TestCheckTsconfigInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- tsconfig -->\n```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/cli.md has no tsconfig block after <!-- tsconfig -->")
	}
	var documented struct {
		CompilerOptions map[string]any `json:"compilerOptions"`
	}
	if err := json.Unmarshal(m[1], &documented); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(checkCompilerOptions)
	got, _ := json.Marshal(documented.CompilerOptions)
	if string(got) != string(want) {
		t.Fatalf("docs/cli.md's compilerOptions:\n%s\ncheck's:\n%s", got, want)
	}
}
