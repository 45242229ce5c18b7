package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
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
	// The envelope is execute_code's (codemode.ResultJSON): logs as lines
	// with their level, durations in milliseconds.
	var env struct {
		OK         bool            `json:"ok"`
		Value      json.RawMessage `json:"value"`
		Logs       []string        `json:"logs"`
		DurationMs float64         `json:"durationMs"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("stdout is not the envelope: %v\n%s", err, r.stdout)
	}
	var value []int
	_ = json.Unmarshal(env.Value, &value)
	if !env.OK || len(value) != 2 || value[1] != 2 || len(env.Logs) != 1 || env.Logs[0] != "[warn] careful" || env.DurationMs <= 0 {
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

// TestOneEnvelope: `sandbox run --json` prints what execute_code returns for
// the same snippet: the same fields, the same units (durations aside, which
// differ run to run).
func TestOneEnvelope(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	cfg := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}}`, exampleServerBinary(t))
	code := "console.warn('careful');\nconst p = await demo.listProjects({});\ntry { await demo.nope({}) } catch (e) { console.log(e.code) }\nreturn p.length > 0"
	url := serveHTTP(t, cfg)
	c := keylessClient(t, url)
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}}})
	if err != nil {
		t.Fatal(err)
	}
	viaMCP := toolText(res)
	r := runCLI(t, "", "run", writeScript(t, "snippet.ts", code), "--config", writeConfig(t, cfg), "--json")
	if r.code != 0 {
		t.Fatalf("run: %+v", r)
	}
	normalize := func(s string) string {
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		delete(v, "durationMs")
		calls, _ := v["calls"].([]any)
		for _, c := range calls {
			delete(c.(map[string]any), "ms")
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if a, b := normalize(viaMCP), normalize(r.stdout); a != b {
		t.Fatalf("execute_code:   %s\nsandbox run --json: %s", a, b)
	}
}

// TestRunUnknownToolSpeaksShell: in the CLI, an unknown tool's hint names
// the shell command that finds tools, not the MCP tool.
func TestRunUnknownToolSpeaksShell(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}}`, exampleServerBinary(t)))
	r := runCLI(t, "", "run", writeScript(t, "x.ts", "return await zzzz.qqqqqqq({})"), "--config", cfg)
	if r.code == 0 || !strings.Contains(r.stderr, "UNKNOWN_TOOL") || !strings.Contains(r.stderr, "sandbox search") || strings.Contains(r.stderr, "search_tools") {
		t.Fatalf("%+v", r)
	}
}

// TestRunPrintsConsoleOutputAsItHappens: the first line reaches stderr
// while the snippet is still running. The snippet then waits ten minutes;
// the test stops it once it has read the line, so output held back to the
// end would hang the test instead of passing it.
func TestRunPrintsConsoleOutputAsItHappens(t *testing.T) {
	t.Parallel()
	snippet := writeScript(t, "slow.ts", `console.log("first"); await new Promise((r) => setTimeout(r, 600000)); return 1`)
	cmd := exec.Command(sandboxBinary(t), "run", "--timeout", "11m", snippet)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() || lines.Text() != "first" {
		t.Fatalf("first stderr line %q", lines.Text())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	_ = cmd.Wait()
	if strings.Contains(strings.Join(rest, "\n"), "first") {
		t.Errorf("the line was printed again at the end: %q", rest)
	}
}

// TestRunAsksOnTheTerminal: a policy rule that asks for approval asks the
// person at `sandbox run`'s terminal (a pseudo-terminal here, by
// util-linux's script), whose "every call of this tool in this run" answers
// the second call too; without a terminal the call is denied, saying why.
func TestRunAsksOnTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an MCP server")
	}
	dir := t.TempDir()
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "gateway": {"policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}], "approvalTimeout": "20s"}}}`, exampleServerBinary(t)))
	snippet := filepath.Join(dir, "del.ts")
	code := `const out = [];
for (const id of ["T-106", "T-107"]) {
  try { await demo.deleteTask({ task_id: id }); out.push("ran") } catch (e) { out.push(e.code + ": " + e.message) }
}
return out`
	if err := os.WriteFile(snippet, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "", "run", snippet, "-c", cfg)
	if !strings.Contains(r.stdout, "DENIED") || !strings.Contains(r.stdout, "stdin is not one") {
		t.Fatalf("without a terminal: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no util-linux script to give sandbox run a terminal")
	}
	cmd := exec.Command(scriptBin, "-q", "-e", "-c", strings.Join([]string{sandboxBinary(t), "run", snippet, "-c", cfg}, " "), "/dev/null")
	cmd.Stdin = strings.NewReader("2\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	if strings.Count(text, "answer with a number") != 1 || !strings.Contains(text, "demo:delete_task") {
		t.Fatalf("the question (once, naming the tool):\n%s", text)
	}
	if !strings.Contains(strings.Join(strings.Fields(text), ""), `["ran","ran"]`) {
		t.Fatalf("both calls should have run:\n%s", text)
	}
}

func TestPickAnAnswer(t *testing.T) {
	options := []string{"approve", "approve every call of this tool in this run", "deny"}
	for answer, want := range map[string]string{"1": "approve", "2": options[1], "3": "deny", "4": "", "0": "", "d": "deny", "Deny": "deny", "approve every": options[1], "": "", "x": "", "1x": ""} {
		if got := pick(answer, options); got != want {
			t.Errorf("pick(%q) = %q, want %q", answer, got, want)
		}
	}
}
