package typegen

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/errcode"
)

// TestPreambleListsTheCodesASnippetCatches: the comment on MCPToolError
// names every code of errcode's table that a snippet can catch, and no
// other, each once, under the advice the table gives it.
func TestPreambleListsTheCodesASnippetCatches(t *testing.T) {
	_, doc, _ := strings.Cut(Preamble, "type ToolResult")
	doc, _, ok := strings.Cut(doc, "declare class MCPToolError")
	if !ok {
		t.Fatal("the preamble declares no MCPToolError")
	}
	flat := strings.Join(strings.Fields(strings.ReplaceAll(doc, "\n *", " ")), " ")
	named := map[string]int{}
	for _, m := range regexp.MustCompile(`\b[A-Z][A-Z_]{2,}\b`).FindAllString(flat, -1) {
		named[m]++
	}
	for _, info := range errcode.All() {
		c := string(info.Code)
		switch {
		case info.InSnippet && named[c] != 1:
			t.Errorf("%s: a snippet can catch it; the preamble names it %d times", c, named[c])
		case !info.InSnippet && named[c] != 0:
			t.Errorf("%s: no snippet sees it, yet the preamble names it", c)
		}
		delete(named, c)
		if info.InSnippet {
			// Its group ends with the table's advice: "A, B (advice);".
			loc := regexp.MustCompile(`\b` + c + `\b`).FindStringIndex(flat)
			rest := flat[loc[0]:]
			if j := strings.Index(rest, "("); j < 0 || !strings.HasPrefix(rest[j+1:], info.Advice.String()+")") {
				t.Errorf("%s is not listed under %q: %s", c, info.Advice, rest)
			}
		}
	}
	for c := range named {
		t.Errorf("the preamble names %s, which is no code of errcode's table", c)
	}
	for _, line := range strings.Split(doc, "\n") {
		if len(line) > 100 {
			t.Errorf("line longer than 100 characters: %q", line)
		}
	}
}
