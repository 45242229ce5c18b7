package runtime

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// The differential corpus: runtime/testdata/nodediff/*.js, each a series of
// snippets that start with a line "// === name" and are the body of an
// async function returning a JSON value. Each runs in the sandbox (worker
// isolation, as agents run) and in the pinned Node 22; their JSON results
// must be equal, or, when one throws, the error's name. Deliberate
// differences are listed here with their reason, and only they may differ.
var nodeDifferences = map[string]string{
	"regexp hasIndices": "the d flag (match indices) is not there: goja keeps no positions per group; the snippet is refused at compile time with a message naming the flag",
	"fetch rejects":     "no network in the sandbox: fetch rejects with a TypeError saying that outside systems are reached through tools (Node tries the network)",
}

type nodeSnippet struct{ file, name, body string }

func loadNodeSnippets(t *testing.T) []nodeSnippet {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "nodediff", "*.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no differential snippets: %v", err)
	}
	var out []nodeSnippet
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split("\n"+string(b), "\n// === ")[1:] {
			name, body, _ := strings.Cut(part, "\n")
			name = strings.TrimSpace(name)
			if seen[name] {
				t.Fatalf("%s: two snippets named %q", f, name)
			}
			seen[name] = true
			out = append(out, nodeSnippet{file: filepath.Base(f), name: name, body: body})
		}
	}
	return out
}

// outcome is a snippet's JSON value, or "throws <ErrorName>".
func canonical(t *testing.T, raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "unparseable " + string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// runInNode runs every snippet in one Node process and returns each one's
// outcome by name.
func runInNode(t *testing.T, snippets []nodeSnippet) map[string]string {
	t.Helper()
	var src strings.Builder
	src.WriteString("const out = {};\n(async () => {\n")
	for _, s := range snippets {
		name, _ := json.Marshal(s.name)
		src.WriteString("try { const v = await (async () => {\n" + s.body + "\n})(); out[" + string(name) + "] = JSON.stringify(v === undefined ? null : v); } catch (e) { out[" + string(name) + "] = 'throws ' + (e && e.name); }\n")
	}
	src.WriteString("process.stdout.write(JSON.stringify(out));\n})();\n")
	path := filepath.Join(t.TempDir(), "snippets.mjs")
	if err := os.WriteFile(path, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testpeers.Node(t), path)
	cmd.Env = append(os.Environ(), "TZ=UTC", "LANG=en_US.UTF-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	raw := map[string]string{}
	if err := json.Unmarshal(stdout, &raw); err != nil {
		t.Fatalf("node's output: %v\n%s", err, stdout)
	}
	out := map[string]string{}
	for name, v := range raw {
		if strings.HasPrefix(v, "throws ") {
			out[name] = v
		} else {
			out[name] = canonical(t, []byte(v))
		}
	}
	return out
}

// TestNodeDifferential runs the differential corpus in the sandbox and in
// Node 22 and lists every difference that is not a deliberate one.
func TestNodeDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node")
	}
	snippets := loadNodeSnippets(t)
	node := runInNode(t, snippets)
	rt := runtimes(t)[IsolateWorkers]
	var diffs []string
	for _, s := range snippets {
		res := run(t, rt, Request{Code: s.body, Filename: s.name + ".ts"})
		got := ""
		switch {
		case res.OK && len(res.Value) == 0:
			got = "null"
		case res.OK:
			got = canonical(t, res.Value)
		default:
			got = "throws " + res.Error.Name
			if res.Error.Name == "" {
				got = "throws " + string(res.Error.Kind) + ": " + res.Error.Message
			}
		}
		want, ok := node[s.name]
		if !ok {
			t.Fatalf("node gave no outcome for %q", s.name)
		}
		_, deliberate := nodeDifferences[s.name]
		switch {
		case got == want && deliberate:
			diffs = append(diffs, s.file+": "+s.name+": listed as a deliberate difference but equal to Node: remove it from nodeDifferences")
		case got != want && !deliberate:
			diffs = append(diffs, s.file+": "+s.name+":\n    sandbox: "+got+"\n    node 22: "+want)
		}
	}
	sort.Strings(diffs)
	t.Logf("%d snippets, %d deliberate differences", len(snippets), len(nodeDifferences))
	if len(diffs) > 0 {
		t.Errorf("%d differences from Node 22:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
}
