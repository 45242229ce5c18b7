package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/vectorindex"
)

func TestSearchCorpus(t *testing.T) {
	r := runCLI(t, "", "search", "list the open pull requests of acme/webapp", "--from", corpusPath, "-k", "3")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], " 1. github:") || !strings.Contains(r.stdout, "pull_requests") ||
		lines[3] != "3 of 341 tools shown" {
		t.Errorf("unexpected output:\n%s", r.stdout)
	}
}

func TestSearchJSONAndUnquotedIntent(t *testing.T) {
	r := runCLI(t, "", "search", "take", "a", "screnshot", "of", "the", "page", "--from", corpusPath, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out searchOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if out.Intent != "take a screnshot of the page" || out.Total != 341 || len(out.Hits) != vectorindex.DefaultK {
		t.Fatalf("unexpected: %+v", out)
	}
	if !strings.Contains(out.Hits[0].ID, "screenshot") || out.Hits[0].Description == "" {
		t.Errorf("top hit %+v", out.Hits[0])
	}
}

func TestSearchToolsListFromStdinWithIndexDir(t *testing.T) {
	list := `{"tools":[{"name":"get-weather","description":"Current weather for a city."},{"name":"get-forecast","description":"Five-day forecast."}]}`
	dir := t.TempDir()
	for i := 0; i < 2; i++ { // the second run reads the persisted index
		r := runCLI(t, list, "search", "is it raining in Paris", "--from", "-", "--server", "weather", "--index-dir", dir, "-k", "1")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, " 1. weather:get-weather") {
			t.Errorf("run %d:\n%s", i, r.stdout)
		}
	}
}

func TestSearchUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--from", corpusPath}, "say what the task is"},
		{[]string{"search", "the and of", "--from", corpusPath}, "no words to search for"},
		{[]string{"search", "list commits"}, "--from"},
		{[]string{"search", "list commits", "--from", "no/such/file.json"}, "no such file"},
		{[]string{"search", "list commits", "--from", corpusPath, "--embedder", "word2vec"}, "unknown provider"},
	} {
		r := runCLI(t, "", c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := runCLI(t, "[]", "search", "list commits", "--from", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "no tools") {
		t.Errorf("empty tool list: exit %d, %q", r.code, r.stderr)
	}
}

func TestSearchToolsCore(t *testing.T) {
	hits, err := searchTools(context.Background(), []vectorindex.Tool{
		{Server: "a", Name: "send_email", Description: "Send an e-mail message"},
		{Server: "a", Name: "delete_file", Description: "Remove a file"},
	}, []string{"mail the report to Bob"}, 5, vectorindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != "a:send_email" {
		t.Errorf("hits %+v", hits)
	}
}

// TestSearchSeveralPhrasings: `sandbox search --intent A --intent B` fuses
// the rankings: over the 341-tool corpus, "remember that Alice works at
// Acme" alone finds no memory tool in its top 3; with two phrasings in the
// knowledge graph's words, a memory tool comes first.
func TestSearchSeveralPhrasings(t *testing.T) {
	top := func(args ...string) string {
		r := runCLI(t, "", append([]string{"search", "--from", corpusPath, "-k", "3", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%+v", r)
		}
		var out struct{ Hits []struct{ ID string } }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range out.Hits {
			ids = append(ids, h.ID)
		}
		return strings.Join(ids, " ")
	}
	alone := top("remember that Alice works at Acme")
	fused := top("remember that Alice works at Acme", "--intent", "create an entity in the knowledge graph", "--intent", "add an observation about a person")
	if strings.Contains(alone, "memory:") || !strings.HasPrefix(fused, "memory:") {
		t.Fatalf("alone: %s\nfused: %s", alone, fused)
	}
	if r := runCLI(t, "", "search", "--from", corpusPath, "a", "--intent", "b", "--intent", "c", "--intent", "d", "--intent", "e", "--intent", "f"); r.code != 2 {
		t.Fatalf("six phrasings: %+v", r)
	}
}
