package main

import (
	"fmt"
	"strings"
	"testing"
)

// `sandbox servers --logs NAME` starts that one server and prints its
// stderr whole: the line that says why Node could not start it included.
func TestServersLogs(t *testing.T) {
	crash := `echo "node:internal/modules/cjs/loader:1228" >&2; echo "  throw err;" >&2; echo "  ^" >&2; echo >&2; ` +
		`echo "Error: Cannot find module '/srv/missing/index.js'" >&2; i=0; while [ $i -lt 30 ]; do echo "    at frame $i" >&2; i=$((i+1)); done; exit 1`
	path := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"crash": {"command": "sh", "args": ["-c", %q]},
		"other": {"command": "/nonexistent/never-started"}, "remote": {"url": "http://127.0.0.1:9/mcp"}},
		"gateway": {"startupTimeout": "5s"}}`, crash))
	r := runCLI(t, "", "servers", "-c", path, "--logs", "crash")
	if r.code != 0 || !strings.Contains(r.stdout, "Error: Cannot find module '/srv/missing/index.js'\n") || !strings.Contains(r.stdout, "    at frame 29\n") ||
		!strings.Contains(r.stderr, `server "crash" is failed: it exited with status 1 before it answered; its stderr follows`) {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(r.stderr, "never-started") {
		t.Fatalf("--logs started the other servers too: %s", r.stderr)
	}
	for args, want := range map[string]string{
		"--logs nope":   `--logs nope: no such server in the config; it has: crash, other, remote`,
		"--logs remote": `remote is a url server, which has no stderr here`,
		"--logs crash --url http://127.0.0.1:9/mcp": `run it with --config, not --url`,
	} {
		r := runCLI(t, "", append([]string{"servers", "-c", path}, strings.Fields(args)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %+v, want %q", args, r, want)
		}
	}
	// The table's shortened last error points at --logs.
	r = runCLI(t, "", "servers", "-c", path)
	if r.code != 1 || !strings.Contains(r.stderr, "sandbox: crash wrote to stderr; `sandbox servers --logs crash` prints it whole") {
		t.Fatalf("%+v", r)
	}
}

// A config pasted from Cline runs, its client-only keys logged as
// warnings in the log's format.
func TestPastedClientConfigWarnsInTheLog(t *testing.T) {
	path := writeConfig(t, `{"mcpServers": {"off": {"command": "/nonexistent/server", "disabled": true, "autoApprove": [], "timeout": 60}}}`)
	r := runCLI(t, "", "servers", "-c", path, "--log-format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, "off   disabled") {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{`{"time":`, `"level":"WARN","msg":"` + path + `:1:77: ignoring \"autoApprove\" in server \"off\"`, `ignoring \"timeout\": 60`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
