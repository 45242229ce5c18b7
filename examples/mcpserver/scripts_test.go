package mcpserver_test

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
	"time"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/typegen"
)

// TestExampleScriptsTypeCheck type-checks examples/demo-*.ts with the real
// tsc against the declarations typegen generates from this server's
// tools/list, with the namespace "demo" of examples/mcp.json: the scripts
// call the tools by the names and types an agent would see. Each script is
// wrapped in an async function first, as the runtime does (top-level await
// and return).
func TestExampleScriptsTypeCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tsc from the npm peers; skipped with -short")
	}
	tsc := testpeers.Bin(t, "tsc")
	tools, err := typegen.ReadTools(rpc(t, mcpserver.New(), "tools/list", map[string]any{}), "demo")
	if err != nil {
		t.Fatal(err)
	}
	// demo-everything.ts also calls the reference server from npm, named
	// "everything": declare its real tools too.
	everything, err := typegen.ReadTools(everythingToolsList(t), "everything")
	if err != nil {
		t.Fatal(err)
	}
	out, err := typegen.Generate(append(tools, everything...), typegen.Options{})
	if err != nil || len(out.Problems) > 0 {
		t.Fatalf("typegen: %v %v", err, out.Problems)
	}

	scripts, _ := filepath.Glob("../demo-*.ts")
	if len(scripts) < 4 {
		t.Fatalf("found %d example scripts (examples/demo-*.ts), want at least 4", len(scripts))
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dts := write("demo.d.ts", out.DTS)
	typecheck := func(files ...string) (string, bool) {
		args := append([]string{"--noEmit", "--strict", "--target", "es2022", "--lib", "es2022,dom", dts}, files...)
		cmd := exec.Command(tsc, args...)
		cmd.Env = testpeers.Env(t)
		b, err := cmd.CombinedOutput()
		return string(b), err == nil
	}
	// Scripts are global, so each wrapper gets its own name.
	n := 0
	wrap := func(src string) string {
		n++
		return fmt.Sprintf("async function __snippet%d(): Promise<unknown> {\n%s\n}\n", n, src)
	}

	var files []string
	for _, s := range scripts {
		src, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, write(filepath.Base(s), wrap(string(src))))
	}
	if msg, ok := typecheck(files...); !ok {
		t.Fatalf("tsc rejects the example scripts:\n%s", msg)
	}

	// Control: tsc really checks against the generated names and types; one
	// run, and every bad file must be reported.
	var bad []string
	for i, src := range []string{
		`return await demo.listTasks({});`,                                          // no such tool
		`return await demo.createTask({ project_id: "PRJ-1" });`,                    // title is required
		`const p = await demo.getProject({ project_id: "PRJ-1" }); return p.tasks;`, // no such field
	} {
		bad = append(bad, write(fmt.Sprintf("bad%d.ts", i), wrap(src)))
	}
	msg, ok := typecheck(bad...)
	for _, f := range bad {
		if ok || !strings.Contains(msg, filepath.Base(f)+"(") {
			t.Errorf("tsc accepted %s:\n%s", filepath.Base(f), msg)
		}
	}
}

// everythingToolsList starts @modelcontextprotocol/server-everything over
// stdio and returns its raw tools/list result (raw, so no schema part is
// lost on the way to typegen).
func everythingToolsList(t *testing.T) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	cmd := exec.CommandContext(ctx, testpeers.Node(t), script, "stdio")
	cmd.Env = testpeers.Env(t)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scripts_test","version":"1"}}}`)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		switch msg.ID {
		case 1:
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		case 2:
			return msg.Result
		}
	}
	t.Fatalf("server-everything gave no tools/list answer: %v", sc.Err())
	return nil
}
