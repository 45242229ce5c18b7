package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/benchutil"
	"github.com/sandboxrt/sandbox/runtime"
)

type corpusTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Title       string          `json:"title,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

func loadCorpus(t testing.TB) []corpusTool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "toolcorpus", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []corpusTool
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

// corpusServers serves the corpus as in-process MCP servers, one per corpus
// server, copies times over (copy 2 of "github" is "github-2", so 3 copies of
// the 341 tools make a 1,023-tool catalog). Every tool answers with its
// arguments as JSON text.
func corpusServers(t testing.TB, tools []corpusTool, copies int) map[string]*server.MCPServer {
	t.Helper()
	servers := map[string]*server.MCPServer{}
	echo := func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := json.Marshal(r.GetArguments())
		return mcp.NewToolResultText(fmt.Sprintf(`{"tool":%q,"args":%s}`, r.Params.Name, args)), nil
	}
	for c := 1; c <= copies; c++ {
		for _, ct := range tools {
			name := ct.Server
			if c > 1 {
				name = fmt.Sprintf("%s-%d", ct.Server, c)
			}
			srv := servers[name]
			if srv == nil {
				srv = server.NewMCPServer(name, "1.0", server.WithToolCapabilities(false))
				servers[name] = srv
			}
			tool := mcp.NewToolWithRawSchema(ct.Name, ct.Description, ct.InputSchema)
			srv.AddTool(tool, echo)
		}
	}
	return servers
}

// queries are the labelled intents of the corpus.
func loadQueries(t testing.TB) []struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
} {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "toolcorpus", "queries-dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct {
		Query    string   `json:"query"`
		Relevant []string `json:"relevant"`
	}
	if err := json.Unmarshal(data, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestTokensCodeModeVersusFullListing measures what an agent reads: with
// code mode, the search result for its task (top-5 declarations and a note);
// without, every tool's schema in its prompt (the tools/list JSON). Tokens are
// estimated as characters / 4.
func TestTokensCodeModeVersusFullListing(t *testing.T) {
	t.Parallel()
	corpus := loadCorpus(t)
	e := newEngine(t, corpusServers(t, corpus, 1), runtime.InProcess)
	if e.ToolCount() != len(corpus) {
		t.Fatalf("catalog has %d tools, corpus %d", e.ToolCount(), len(corpus))
	}
	listing := make([]map[string]any, 0, len(corpus))
	for _, ct := range corpus {
		listing = append(listing, map[string]any{"name": ct.Server + "__" + ct.Name, "description": ct.Description, "inputSchema": ct.InputSchema})
	}
	full, _ := json.Marshal(map[string]any{"tools": listing})

	var sizes []int
	hit := 0
	queries := loadQueries(t)
	for _, q := range queries {
		res, err := e.Search(context.Background(), SearchRequest{Intent: q.Query, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(res.Declarations)+len(res.Note))
		for _, f := range res.Tools {
			if contains(q.Relevant, f.ID) {
				hit++
				break
			}
		}
	}
	sort.Ints(sizes)
	median := sizes[len(sizes)/2]
	mean := 0
	for _, s := range sizes {
		mean += s
	}
	mean /= len(sizes)
	t.Logf("full listing of %d tools: %d chars (~%d tokens)", len(corpus), len(full), len(full)/4)
	t.Logf("code mode, top-5 search result: median %d chars (~%d tokens), mean %d (~%d tokens), max %d; %.1f%% of the full listing",
		median, median/4, mean, mean/4, sizes[len(sizes)-1], 100*float64(median)/float64(len(full)))
	t.Logf("a relevant tool was among the 5 shown for %d of %d intents", hit, len(queries))
	if median*20 > len(full) {
		t.Errorf("code mode shows %d chars for a task, over 5%% of the %d-char full listing", median, len(full))
	}
	if hit < len(queries)*9/10 {
		t.Errorf("a relevant tool was shown for only %d of %d intents", hit, len(queries))
	}
}

// BenchmarkEndToEnd is the code-mode overhead the issue budgets: an intent
// searched over 1,023 tools (top 5, with declarations), then a snippet bound
// to those tools making 5 calls through the gateway to in-process upstreams.
func BenchmarkEndToEnd(b *testing.B) {
	for _, iso := range []runtime.Isolation{runtime.IsolateWorkers, runtime.InProcess} {
		b.Run(iso.String(), func(b *testing.B) {
			corpus := loadCorpus(b)
			e := newEngine(b, corpusServers(b, corpus, 3), iso)
			if e.ToolCount() < 1000 {
				b.Fatalf("catalog has %d tools", e.ToolCount())
			}
			queries := loadQueries(b)
			code := `
const calls = [1, 2, 3, 4, 5].map((i) => github.listCommits({ owner: "acme", repo: "webapp", perPage: i }));
const results = await Promise.all(calls);
return results.length;`
			ctx := context.Background()
			var l benchutil.Latencies
			for i := 0; b.Loop(); i++ {
				// A fresh intent every time, and no remembered searches: the
				// search is paid in full, and only execute_code's repeat of
				// search_tools' intent is served from memory, as for an agent.
				intent := queries[i%len(queries)].Query
				e.hits.reset()
				l.Time(func() {
					found, err := e.Search(ctx, SearchRequest{Intent: intent, K: 5})
					if err != nil || len(found.Declarations) == 0 {
						b.Fatal(err)
					}
					res, err := e.Execute(ctx, ExecuteRequest{Code: code, Intent: intent})
					if err != nil || !res.OK || len(res.Calls) != 5 {
						b.Fatalf("%v %+v", err, res)
					}
				})
			}
			l.Report(b, "op", 1)
		})
	}
}

// BenchmarkDenoSameSnippet runs the same snippet with 5 local async stubs in
// place of the tools, one `deno run` per snippet.
func BenchmarkDenoSameSnippet(b *testing.B) {
	benchutil.Deno(b, `
const github = { listCommits: async (args: Record<string, unknown>) => ({ tool: "github:list_commits", args }) };
const calls = [1, 2, 3, 4, 5].map((i) => github.listCommits({ owner: "acme", repo: "webapp", perPage: i }));
const results = await Promise.all(calls);
console.log(JSON.stringify(results.length));
`, "5")
}
