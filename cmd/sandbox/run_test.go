package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeScript(t *testing.T, name, code string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunPrintsResultAndLogs(t *testing.T) {
	path := writeScript(t, "ok.ts", "console.log('to stderr');\nconsole.error('also stderr');\nreturn { answer: 6 * 7 };")
	r := runCLI(t, "", "run", path)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	var v map[string]int
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v["answer"] != 42 {
		t.Fatalf("stdout = %q, want the JSON result only", r.stdout)
	}
	if r.stderr != "to stderr\nalso stderr\n" {
		t.Errorf("stderr = %q", r.stderr)
	}
}

func TestRunFromStdin(t *testing.T) {
	r := runCLI(t, "const n: number = await Promise.resolve(41);\nreturn n + 1", "run", "-")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "42" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestRunExitCodesAndMessages(t *testing.T) {
	cases := []struct {
		name, code string
		args       []string
		exit       int
		stderr     []string
	}{
		{"runtime error", "const a = 1;\nthrow new TypeError('bad input');", nil, exitFailed, []string{"err.ts:2:7: TypeError: bad input", "at <snippet> (err.ts:2:7)"}},
		{"compile error", "let x: number = ;", nil, exitCompile, []string{"err.ts:1:17: compile error", "1 | let x: number = ;"}},
		{"import", "import x from 'y'", nil, exitCompile, []string{"import and export are not available"}},
		{"time limit", "while (true) {}", []string{"--timeout", "300ms"}, exitLimit, []string{"limit exceeded (time)"}},
		{"memory limit", "return 'x'.repeat(2 ** 40)", []string{"--memory", "64MiB"}, exitLimit, []string{"limit exceeded (memory)", "64MiB"}},
		{"deadlock", "await new Promise(() => {})", nil, exitFailed, []string{"deadlock", "can never settle"}},
		{"bad flag value", "return 1", []string{"--memory", "lots"}, exitUsage, []string{`--memory "lots" is not a size`}},
		{"result not JSON", "const o: any = {}; o.o = o; return o", nil, exitFailed, []string{"cycle at $.o"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "err.ts", c.code)
			r := runCLI(t, "", append([]string{"run", path}, c.args...)...)
			if r.code != c.exit {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, c.exit, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing on failure", r.stdout)
			}
			for _, s := range c.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q lacks %q", r.stderr, s)
				}
			}
		})
	}
}

func TestRunMissingFile(t *testing.T) {
	r := runCLI(t, "", "run", "does-not-exist.ts")
	if r.code != exitUsage || !strings.Contains(r.stderr, "cannot read does-not-exist.ts") || !strings.Contains(r.stderr, "pass a .ts file") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, "", "run")
	if r.code == 0 || !strings.Contains(r.stderr, "accepts 1 arg") {
		t.Fatalf("no argument: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestRunJSONEnvelope(t *testing.T) {
	path := writeScript(t, "env.ts", "console.warn('careful');\nreturn [1, 2]")
	r := runCLI(t, "", "run", path, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var env struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Logs  []struct{ Level, Message string }
		Calls []any `json:"calls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("stdout is not the envelope: %v\n%s", err, r.stdout)
	}
	var value []int
	_ = json.Unmarshal(env.Value, &value)
	if !env.OK || len(value) != 2 || value[1] != 2 || len(env.Logs) != 1 || env.Logs[0].Level != "warn" || env.Calls == nil {
		t.Fatalf("envelope = %+v", env)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q; with --json the logs are in the envelope", r.stderr)
	}
	// A failure with --json: the envelope carries the error, exit status says so.
	path = writeScript(t, "bad.ts", "throw new Error('x')")
	r = runCLI(t, "", "run", path, "--json")
	if r.code != exitFailed || !strings.Contains(r.stdout, `"kind": "runtime"`) {
		t.Fatalf("exit %d stdout %s", r.code, r.stdout)
	}
}

func TestRunHelpExplainsItself(t *testing.T) {
	r := runCLI(t, "", "run", "--help")
	for _, s := range []string{"top-level await", "Exit status", "--timeout", "--memory", "--json", "stdin"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("help lacks %q", s)
		}
	}
}

func TestRunTheREADMEExample(t *testing.T) {
	r := runCLI(t, "", "run", "../../examples/hello.ts")
	if r.code != 0 || !strings.Contains(r.stdout, `"x": 4`) || !strings.Contains(r.stderr, "summing 2 points") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}
