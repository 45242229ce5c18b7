package console

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// writeAudit writes records as the gateway's audit log writes them.
func writeAudit(t *testing.T, path string, records []gateway.AuditRecord) {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSearchAuditPagesNewestFirstAcrossRotatedFiles: 250 lines, 150 of
// them in the rotated copy, paged newest first, filtered by principal,
// outcome and time.
func TestSearchAuditPagesNewestFirstAcrossRotatedFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var all []gateway.AuditRecord
	for i := range 250 {
		r := gateway.AuditRecord{Time: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano), Kind: gateway.AuditKindCall,
			Principal: []string{"acme/alice", "acme/bob"}[i%2], Tool: "demo:t", Outcome: "OK", DurationMs: float64(i)}
		if i%10 == 0 {
			r.Outcome = "DENIED"
		}
		all = append(all, r)
	}
	writeAudit(t, path+".1", all[:150])
	writeAudit(t, path, all[150:])

	page := func(q auditQuery) auditResult {
		t.Helper()
		res, err := searchAudit(path, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	p0 := page(auditQuery{})
	p1 := page(auditQuery{Before: p0.Older})
	p2 := page(auditQuery{Before: p1.Older})
	if len(p0.Records) != 100 || p0.Older == 0 || p0.Records[0].DurationMs != 249 || p0.Records[99].DurationMs != 150 {
		t.Errorf("page 0: %d records, older %v, first %v", len(p0.Records), p0.Older, p0.Records[0].DurationMs)
	}
	if len(p1.Records) != 100 || p1.Older == 0 || p1.Records[0].DurationMs != 149 {
		t.Errorf("page 1 (across the rotation): %d records, older %v", len(p1.Records), p1.Older)
	}
	if len(p2.Records) != 50 || p2.Older != 0 || p2.Records[49].DurationMs != 0 {
		t.Errorf("page 2: %d records, older %v", len(p2.Records), p2.Older)
	}
	bob := page(auditQuery{Principal: "acme/bob", Outcome: "DENIED"})
	if len(bob.Records) != 0 { // bob has the odd lines; DENIED are multiples of 10
		t.Errorf("bob's denials: %+v", bob.Records)
	}
	alice := page(auditQuery{Principal: "acme/alice", Outcome: "DENIED"})
	if len(alice.Records) != 25 || alice.Older != 0 {
		t.Errorf("alice's denials: %d", len(alice.Records))
	}
	window := page(auditQuery{From: start.Add(100 * time.Minute), To: start.Add(110 * time.Minute)})
	if len(window.Records) != 10 || window.Records[0].DurationMs != 109 || window.Records[9].DurationMs != 100 {
		t.Errorf("10 minutes: %d records", len(window.Records))
	}
}

// TestAuditPageFiltersAndEscapes: the audit page filters by kind, shows
// who decided an approval, escapes what a line holds, and says how to
// write a time it cannot read.
func TestAuditPageFiltersAndEscapes(t *testing.T) {
	w := newWorld(t)
	writeAudit(t, w.auditPath+".1", []gateway.AuditRecord{{Time: "2026-03-02T10:00:00Z", Kind: gateway.AuditKindApproval, Principal: "agent/agent",
		Tool: "evil:drop_table", Decision: "approved by operator ops/ops", DecidedBy: "ops/ops"},
		{Time: "2026-03-02T10:01:00Z", Kind: gateway.AuditKindCall, Principal: "agent/agent", Tool: "evil:" + hostile, Outcome: "OK"}})
	resp, body := w.get(t, "ops-key", "audit?"+url.Values{"kind": {"approval"}}.Encode())
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "approved by operator ops/ops (by ops/ops)") || strings.Contains(body, "evil:&lt;script") {
		t.Errorf("the approvals in the audit page: %d\n%s", resp.StatusCode, body)
	}
	_, body = w.get(t, "ops-key", "audit")
	if !strings.Contains(body, "evil:&lt;script&gt;") || strings.Contains(body, "<script>window") {
		t.Errorf("the audit page does not escape a tool's name:\n%s", body)
	}
	// Paging keeps the filter: 150 more call lines, the older page's link.
	var more []gateway.AuditRecord
	for i := range 150 {
		more = append(more, gateway.AuditRecord{Time: fmt.Sprintf("2026-03-01T10:%02d:%02dZ", i/60, i%60), Kind: gateway.AuditKindCall, Principal: "acme/carol", Tool: "evil:lookup", Outcome: "OK"})
	}
	writeAudit(t, w.auditPath+".2", more)
	_, body = w.get(t, "ops-key", "audit?kind=call&principal=acme/carol")
	older := regexp.MustCompile(`<a href="([^"]+)" rel="next">Older</a>`).FindStringSubmatch(body)
	if older == nil || strings.Count(body, "<td>acme/carol</td>") != 100 {
		t.Fatalf("the first page of carol's calls:\n%s", body)
	}
	_, body = w.get(t, "ops-key", html.UnescapeString(older[1]))
	if strings.Count(body, "<td>acme/carol</td>") != 50 || !strings.Contains(body, `rel="prev">Newest</a>`) || strings.Contains(body, `rel="next"`) {
		t.Errorf("the older page (%s):\n%s", older[1], body)
	}

	_, body = w.get(t, "ops-key", "audit?from=yesterday")
	if !strings.Contains(body, "from &#34;yesterday&#34;: write a UTC time as 2026-03-02T15:04") {
		t.Errorf("a bad time:\n%s", body)
	}
}
