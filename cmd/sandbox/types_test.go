package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpusPath = "../../testdata/toolcorpus/tools.json"

func TestTypesCorpusToStdout(t *testing.T) {
	r := runCLI(t, "", "types", "--from", corpusPath)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"declare class MCPToolError", "declare namespace github {", "function listCommits(input: {", "declare namespace filesystem {"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if r.stderr != "" {
		t.Errorf("the real corpus should give no warnings, got:\n%s", r.stderr)
	}
}

func TestTypesToFileAndFilters(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tools.d.ts")
	r := runCLI(t, "", "types", "--from", corpusPath, "-o", out, "--server", "git", "--tool", "filesystem:read_text_file")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("with -o nothing goes to stdout, got %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "wrote 13 tools to "+out) {
		t.Errorf("summary missing or wrong: %q", r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dts := string(data)
	if strings.Count(dts, "declare namespace ") != 2 || !strings.Contains(dts, "declare namespace git {") ||
		!strings.Contains(dts, "function readTextFile(") || strings.Contains(dts, "function readFile(") {
		t.Errorf("filters not applied:\n%s", dts)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestTypesToolsListResponse(t *testing.T) {
	list := `{"tools":[{"name":"get-weather","description":"Weather.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}`
	rpc := `{"jsonrpc":"2.0","id":1,"result":` + list + `}`
	for name, input := range map[string]string{"result": list, "json-rpc": rpc} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, input, "types", "--from", "-", "--server", "weather-api")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "declare namespace weatherApi {") || !strings.Contains(r.stdout, "function getWeather(input: { city: string }): Promise<ToolResult>;") {
				t.Errorf("unexpected output:\n%s", r.stdout)
			}
		})
	}
	r := runCLI(t, list, "types", "--from", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "--server NAME") {
		t.Errorf("a tools/list response without --server should say to pass one; exit %d: %s", r.code, r.stderr)
	}
}

func TestTypesBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no --from", []string{"types"}, "--from tools.json"},
		{"missing file", []string{"types", "--from", filepath.Join(dir, "nope.json")}, "no such file"},
		{"directory", []string{"types", "--from", dir}, "is a directory"},
		{"invalid JSON", []string{"types", "--from", write("bad.json", "[\n  {\"name\": \"x\",\n  oops\n]")}, "line 3, column 3"},
		{"scalar", []string{"types", "--from", write("scalar.json", `"tools"`)}, "JSON scalar"},
		{"wrong object", []string{"types", "--from", write("obj.json", `{"name": "x"}`)}, `without "tools"`},
		{"no name", []string{"types", "--from", write("noname.json", `[{"server": "s", "inputSchema": {}}]`)}, `tool #1 has no "name"`},
		{"unknown server", []string{"types", "--from", corpusPath, "--server", "gihtub"}, `no tools from server "gihtub"; the servers are: "aws-kb-retrieval"`},
		{"unknown tool", []string{"types", "--from", corpusPath, "--tool", "list_commits"}, `tool ids are "server:tool"`},
		{"bad output path", []string{"types", "--from", corpusPath, "-o", filepath.Join(dir, "missing", "x.d.ts")}, "cannot write"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "", c.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, c.want)
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine") {
				t.Errorf("crashed: %s", r.stderr)
			}
		})
	}
}

func TestTypesProblemsAreWarnings(t *testing.T) {
	tools := `[
	 {"server": "s", "name": "broken", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}},
	 {"server": "s", "name": "fine", "inputSchema": {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}}
	]`
	r := runCLI(t, tools, "types", "--from", "-")
	if r.code != 0 {
		t.Fatalf("problems are warnings without --strict; exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `sandbox: warning: s:broken: /inputSchema/properties/a/$ref: $ref "#/$defs/nope" points nowhere`) {
		t.Errorf("warning should name the tool and the pointer: %q", r.stderr)
	}
	if !strings.Contains(r.stdout, "function fine(input: { b: string })") || !strings.Contains(r.stdout, "function broken(input?: { a?: unknown })") {
		t.Errorf("both tools should be declared:\n%s", r.stdout)
	}
	r = runCLI(t, tools, "types", "--from", "-", "--strict")
	if r.code != 1 || !strings.Contains(r.stderr, "1 problems (--strict)") {
		t.Errorf("--strict should exit 1; exit %d: %s", r.code, r.stderr)
	}
}

func TestTypesHelp(t *testing.T) {
	r := runCLI(t, "", "types", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "tools/list response") || !strings.Contains(r.stdout, "--strict") {
		t.Errorf("help should explain the input formats and flags; exit %d:\n%s", r.code, r.stdout)
	}
}

func TestTypesGlobals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "globals.d.ts")
	r := runCLI(t, "", "types", "--globals", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "es2025.iterator") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"declare var URL:", "declare var crypto: Crypto", "declare var AbortSignal:"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("globals lack %q", want)
		}
	}
	if strings.Contains(string(data), "declare function fetch") {
		t.Error("fetch is declared, but a snippet has no network")
	}
	if r := runCLI(t, "", "types", "--globals", "--from", corpusPath); r.code != 2 || !strings.Contains(r.stderr, "without --from") {
		t.Errorf("--globals with --from: exit %d, %q", r.code, r.stderr)
	}
}
