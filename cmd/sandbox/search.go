package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// searchFlags are the options of `sandbox search`.
type searchFlags struct {
	from     string
	servers  []string
	k        int
	json     bool
	indexDir string
	embedder vectorindex.Embedder
	dts      bool
	intents  []string
	gw       gatewayFlags
}

func newSearchCmd() *cobra.Command {
	var f searchFlags
	cmd := &cobra.Command{
		Use:   `search "intent" --from tools.json [-k 5] [--json]`,
		Short: "Find the MCP tools that fit a task",
		Long: `Find the tools an agent would be shown for a task: a hybrid search (BM25 with
WordNet query expansion, plus vector similarity) over tool names, descriptions
and parameters. The intent can be plain English, a code comment
("// TODO: fetch open PRs"), misspelt, or several steps ("read the report,
then post it to Slack").

--from reads tool definitions as "sandbox types" does: a JSON array of MCP
tool definitions, each with a "server" field, or a tools/list response with
--server NAME. Use - for stdin. --config instead connects to the MCP servers of
a gateway config and searches their live tools.

--dts prints what an agent is shown: with --config, the search_tools answer of
"sandbox serve" (the servers, the tools best first with why, their servers'
other tools, and the tools' TypeScript declarations in that order); with
--from, the declarations of the tools found.

By default the index lives in memory and uses the built-in offline embedder.
--index-dir keeps it on disk, so that the next run re-embeds only tools that
changed; --embedder ollama|openai uses an embedding service instead.

Exit status: 0 results printed; 2 usage error, unreadable input or an empty
intent.`,
		Example: `  sandbox search "list open pull requests" --from testdata/toolcorpus/tools.json
  sandbox search "which tasks are blocked" --config examples/mcp.json --dts
  sandbox search "// TODO: screenshot the page" --from tools.json -k 3 --json
  sandbox search "embed me" --from tools.json --embedder ollama --embed-model nomic-embed-text`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			phrasings := f.intents
			if intent := strings.Join(args, " "); strings.TrimSpace(intent) != "" {
				phrasings = append([]string{intent}, phrasings...)
			}
			if len(phrasings) == 0 {
				return &exitError{code: 2, msg: `search: say what the task is: sandbox search "list open pull requests" --from tools.json (more phrasings: --intent "..." --intent "...")`}
			}
			if len(phrasings) > codemode.MaxIntents {
				return &exitError{code: 2, msg: fmt.Sprintf("search: at most %d phrasings of one task", codemode.MaxIntents)}
			}
			intent := strings.Join(phrasings, " | ")
			if (f.from == "") == (f.gw.config == "") {
				return &exitError{code: 2, msg: "search: say where the tools come from: --from tools.json (or - for stdin), or --config mcp.json for the live tools of MCP servers"}
			}
			if f.gw.config != "" {
				return searchLive(cmd, f, phrasings)
			}
			tt, err := readToolsFile(f.from, f.servers, cmd.InOrStdin())
			if err != nil {
				return &exitError{code: 2, msg: "search: " + err.Error()}
			}
			tools := make([]vectorindex.Tool, len(tt))
			for i, t := range tt {
				tools[i] = vectorindex.Tool{Server: t.Server, Name: t.Name, Title: t.Title,
					Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
				if t.Annotations != nil {
					tools[i].Annotations, _ = json.Marshal(t.Annotations) // a struct of plain fields always marshals
				}
			}
			hits, err := searchTools(cmd.Context(), tools, phrasings, f.k, vectorindex.Options{Dir: f.indexDir, Embedder: f.embedder})
			if err != nil {
				return &exitError{code: 2, msg: "search: " + err.Error()}
			}
			if f.dts {
				return writeDeclarations(cmd.OutOrStdout(), tt, hits)
			}
			return writeSearchResults(cmd.OutOrStdout(), intent, tools, hits, f.json)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.from, "from", "", "file of tool definitions or a tools/list response (- for stdin)")
	fl.StringArrayVar(&f.servers, "server", nil, "names the server of a tools/list response")
	fl.IntVarP(&f.k, "k", "k", vectorindex.DefaultK, fmt.Sprintf("number of tools to show (1 to %d)", vectorindex.MaxK))
	fl.BoolVar(&f.json, "json", false, "print JSON: {intent, total, hits: [{id, score, description}]}")
	fl.StringVar(&f.indexDir, "index-dir", "", "keep the index in this directory between runs")
	fl.StringVar(&f.embedder.Provider, "embedder", "builtin", "builtin, ollama or openai (any OpenAI-compatible /embeddings API)")
	fl.StringVar(&f.embedder.URL, "embed-url", "", "embedding API base URL (ollama: http://localhost:11434/api; openai: https://api.openai.com/v1)")
	fl.StringVar(&f.embedder.Model, "embed-model", "", "embedding model, e.g. nomic-embed-text or text-embedding-3-small")
	fl.StringVar(&f.embedder.APIKeyEnv, "embed-key-env", "", "environment variable that holds the API key (openai: OPENAI_API_KEY)")
	fl.BoolVar(&f.dts, "dts", false, "print the TypeScript declarations of the tools found, as an agent sees them")
	fl.StringArrayVar(&f.intents, "intent", nil, "another phrasing of the task, in the product's own words (repeatable; each phrasing's best tool is shown)")
	f.gw.add(cmd, "warn")
	return cmd
}

// searchLive searches the live catalog of a gateway config with the same
// engine `sandbox serve` uses for search_tools.
func searchLive(cmd *cobra.Command, f searchFlags, phrasings []string) error {
	intent := strings.Join(phrasings, " | ")
	g, file, err := startGateway(cmd.Context(), f.gw, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer g.Close()
	opts := file.CodeMode.Engine
	if cmd.Flags().Changed("embedder") {
		opts.Embedder = f.embedder
	}
	if f.indexDir != "" {
		opts.IndexDir = f.indexDir
	}
	engine, err := codemode.New(g, nil, opts)
	if err != nil {
		return &exitError{code: 2, msg: "search: " + err.Error()}
	}
	defer engine.Close()
	res, err := engine.Search(cmd.Context(), codemode.SearchRequest{Intent: phrasings[0], Intents: phrasings[1:], K: f.k, Caller: cliCaller})
	if err != nil {
		return &exitError{code: 2, msg: "search: " + err.Error()}
	}
	if f.dts {
		_, err := io.WriteString(cmd.OutOrStdout(), res.Text())
		return err
	}
	var tools []vectorindex.Tool
	for _, t := range g.Tools() {
		tools = append(tools, codemode.IndexTool(t))
	}
	hits := make([]vectorindex.Hit, len(res.Tools))
	for i, t := range res.Tools {
		hits[i] = vectorindex.Hit{ID: t.ID, Score: t.Score}
	}
	return writeSearchResults(cmd.OutOrStdout(), intent, tools, hits, f.json)
}

// writeDeclarations prints the .d.ts of the hits, with names assigned over
// every tool of the file (as the runtime's bindings would name them).
func writeDeclarations(w io.Writer, all []typegen.Tool, hits []vectorindex.Hit) error {
	byID := make(map[string]typegen.Tool, len(all))
	for _, t := range all {
		byID[t.ID()] = t
	}
	subset := make([]typegen.Tool, 0, len(hits))
	for _, h := range hits {
		if t, ok := byID[h.ID]; ok {
			subset = append(subset, t)
		}
	}
	out, err := typegen.Generate(subset, typegen.Options{Names: typegen.AssignNames(all)})
	if err != nil {
		return &exitError{code: 2, msg: "search: " + err.Error()}
	}
	_, err = fmt.Fprintf(w, "// %d of %d tools shown\n%s", len(subset), len(all), out.DTS)
	return err
}

// searchTools is the core of `sandbox search`: index the tools, search once.
// It takes the catalog as a slice so that any source (a file today, the
// gateway's live catalog with --config later) can feed it.
func searchTools(ctx context.Context, tools []vectorindex.Tool, phrasings []string, k int, opts vectorindex.Options) ([]vectorindex.Hit, error) {
	if len(tools) == 0 {
		return nil, errors.New("there are no tools to search: the file lists none")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ix, err := vectorindex.New(opts)
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(ctx, tools); err != nil {
		return nil, err
	}
	// as search_tools does: the phrasings joined into one intent, which the
	// index splits into clauses; fused by rank when too long to join
	if joined := strings.Join(phrasings, " | "); len(joined) <= vectorindex.MaxIntentLen {
		return ix.Search(ctx, joined, k)
	}
	var rankings [][]vectorindex.Hit
	for _, p := range phrasings {
		hits, err := ix.Search(ctx, p, min(max(4*k, 20), len(tools)))
		if err != nil {
			return nil, err
		}
		rankings = append(rankings, hits)
	}
	return vectorindex.Fuse(rankings, k), nil
}

type searchOutput struct {
	Intent string      `json:"intent"`
	Total  int         `json:"total"`
	Hits   []searchHit `json:"hits"`
}

type searchHit struct {
	ID          string  `json:"id"`
	Score       float64 `json:"score"`
	Description string  `json:"description,omitempty"`
}

// writeSearchResults prints the hits, best first: a table for people, or
// JSON for programs.
func writeSearchResults(w io.Writer, intent string, tools []vectorindex.Tool, hits []vectorindex.Hit, asJSON bool) error {
	desc := make(map[string]string, len(tools))
	for _, t := range tools {
		id := t.ID
		if id == "" {
			id = t.Server + ":" + t.Name
		}
		desc[id] = t.Description
	}
	out := searchOutput{Intent: intent, Total: len(tools), Hits: make([]searchHit, len(hits))}
	for i, h := range hits {
		out.Hits[i] = searchHit{ID: h.ID, Score: round3(h.Score), Description: firstSentence(desc[h.ID], 160)}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	width := 0
	for _, h := range out.Hits {
		width = max(width, utf8.RuneCountInString(h.ID))
	}
	for i, h := range out.Hits {
		fmt.Fprintf(w, "%2d. %-*s  %.3f  %s\n", i+1, width, h.ID, h.Score, firstSentence(h.Description, 80))
	}
	fmt.Fprintf(w, "%d of %d tools shown\n", len(out.Hits), out.Total)
	return nil
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// firstSentence shortens a description for a one-line listing: up to the
// first sentence end or newline, at most max runes, whitespace collapsed.
func firstSentence(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:max-1])) + "…"
	}
	return s
}
