package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	// A server disabled as asked is not a warning.
	if strings.Contains(r.stderr, `"state":"disabled"`) {
		t.Errorf("a disabled server is warned about:\n%s", r.stderr)
	}
	for _, want := range []string{`{"time":`, `"level":"WARN","msg":"` + path + `:1:77: ignoring \"autoApprove\" in server \"off\"`, `ignoring \"timeout\": 60`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// serve refuses a port in use, saying what to do, before it starts any
// server: the upstream here would leave a marker had it been started.
func TestServeChecksThePortBeforeTheServers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	marker := filepath.Join(t.TempDir(), "started")
	path := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"slow": {"command": "sh", "args": ["-c", "touch %s; sleep 30"]}}}`, marker))
	start := time.Now()
	r := runCLI(t, "", "serve", "-c", path, "--http", ln.Addr().String())
	if r.code != 2 || !strings.Contains(r.stderr, "--http "+ln.Addr().String()+": the port is in use (another sandbox serve?): stop what listens there, or pick another port") {
		t.Fatalf("%+v", r)
	}
	// Beyond loopback without auth: refused before any server starts too.
	r2 := runCLI(t, "", "serve", "-c", path, "--http", "0.0.0.0:0")
	if r2.code != 2 || !strings.Contains(r2.stderr, "nobody is authenticated") {
		t.Fatalf("%+v", r2)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("serve started the upstream before refusing")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("refusing took %v", d)
	}
}

// The listening line is a record of the log, in its format, at any
// --log-level, with the address as a field of its own.
func TestServeListeningLineInTheLogFormat(t *testing.T) {
	path := writeConfig(t, `{"mcpServers": {}}`)
	for format, re := range map[string]*regexp.Regexp{
		"json": regexp.MustCompile(`^(\{"time":.*"msg":"listening on http://[^"]+/mcp".*\})$`),
		"text": regexp.MustCompile(`^(time=\S+ level=INFO msg="listening on http://\S+/mcp" url=http://\S+/mcp( console=http://\S+/ui/)?)$`),
	} {
		cmd := exec.Command(sandboxBinary(t), "serve", "-c", path, "--http", "127.0.0.1:0", "--code-mode=false", "--log-level", "error", "--log-format", format)
		line := startLogged(t, cmd, re)
		if format == "json" {
			var rec struct{ Level, Msg, URL string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level != "INFO" || !strings.HasPrefix(rec.URL, "http://127.0.0.1:") || rec.Msg != "listening on "+rec.URL {
				t.Fatalf("%s: %+v %v", line, rec, err)
			}
		}
		stopProcess(cmd, 10*time.Second)
	}
}

// JSON logs give durations in milliseconds, named so.
func TestJSONLogDurationsInMs(t *testing.T) {
	var buf bytes.Buffer
	f := gatewayFlags{logLevel: "info", logFormat: "json"}
	log, err := f.logger(&buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("call", slog.Duration("duration", 1500*time.Microsecond))
	if got := buf.String(); !strings.Contains(got, `"durationMs":1.5`) || strings.Contains(got, `"duration":`) {
		t.Fatalf("%s", got)
	}
	buf.Reset()
	f.logFormat = "text" // for people: a duration as Go writes it
	log, _ = f.logger(&buf)
	log.Info("call", slog.Duration("duration", 1500*time.Microsecond))
	if got := buf.String(); !strings.Contains(got, "duration=1.5ms") {
		t.Fatalf("%s", got)
	}
}

// A namespace in a run without --config is explained: no config was loaded.
func TestRunWithoutConfigExplainsAnUnboundNamespace(t *testing.T) {
	script := writeScript(t, "ns.ts", "const r = await github.searchIssues({q: \"x\"});\nreturn r;\n")
	r := runCLI(t, "", "run", script)
	if r.code != exitFailed || !strings.Contains(r.stderr, "ReferenceError: github is not defined (no config was loaded, so no MCP server is a namespace here: pass --config mcp.json") {
		t.Fatalf("%+v", r)
	}
	// A global the sandbox lacks is not a namespace.
	r = runCLI(t, "", "run", writeScript(t, "deno.ts", "return Deno.version"))
	if r.code != exitFailed || !strings.Contains(r.stderr, "ReferenceError: Deno is not defined\n") {
		t.Fatalf("%+v", r)
	}
}

// The CLI's hint for a server that is down names `sandbox servers`, not
// the MCP hub tool a CLI user cannot call.
func TestRunHintNamesSandboxServers(t *testing.T) {
	path := writeConfig(t, `{"mcpServers": {"gone": {"command": "/nonexistent/server"}}, "gateway": {"startupTimeout": "2s", "restartBackoff": "1m"}}`)
	script := writeScript(t, "gone.ts", "return await gone.anything({})")
	r := runCLI(t, "", "run", script, "-c", path)
	if r.code == 0 || !strings.Contains(r.stderr, "check `sandbox servers --config "+path+"`") || strings.Contains(r.stderr, "gateway__list_servers") {
		t.Fatalf("%+v", r)
	}
}
