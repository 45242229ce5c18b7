package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// auditLines reads the JSON lines of the files named, in order.
func auditLines(t *testing.T, paths ...string) []AuditRecord {
	t.Helper()
	var out []AuditRecord
	for _, p := range paths {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r AuditRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: not JSON: %s", p, sc.Text())
			}
			out = append(out, r)
		}
		f.Close()
	}
	return out
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestRefusedRequestsCannotRotatePrincipalsLines is issue 27's audit attack
// at the log itself: 60 refused requests against a small log with keep 1
// erased every principal's lines. Refused requests are counted and written
// apart now: a flood from any number of addresses leaves the principals'
// file as it was, and adds at most maxRefusalKeys+1 lines a minute to its own.
func TestRefusedRequestsCannotRotatePrincipalsLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, err := openAudit(AuditConfig{Path: path, MaxBytes: 400, Keep: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 27, 10, 0, 5, 0, time.UTC)}
	a.now = clock.now
	if err := a.write(AuditRecord{Kind: AuditKindCall, Principal: "alice", Tool: "s:t", Outcome: "OK"}); err != nil {
		t.Fatal(err)
	}
	for i := range 100_000 {
		// One address sends most; a thousand others one each.
		remote := "10.0.0.1"
		if i%100 == 0 {
			remote = fmt.Sprintf("10.1.%d.%d", i/25600, i/100%256)
		}
		if err := a.write(AuditRecord{Kind: AuditKindAuth, Outcome: "UNAUTHORIZED", Remote: remote, Reason: "invalid_token: unknown API key"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	main := auditLines(t, path, path+".1")
	if len(main) != 1 || main[0].Principal != "alice" {
		t.Errorf("the principals' file: %+v", main)
	}
	// The refused file rotates its own lines away, within its own bound.
	refused := auditLines(t, filepath.Join(dir, "audit.refused.jsonl"), filepath.Join(dir, "audit.refused.jsonl.1"))
	if len(refused) == 0 {
		t.Fatal("no refused lines")
	}
	for _, r := range refused {
		if r.Kind != AuditKindAuth || r.Time != "2026-11-27T10:00:00Z" || r.Outcome != "UNAUTHORIZED" || r.Count == 0 {
			t.Errorf("a refused line: %+v", r)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if info, _ := e.Info(); info.Size() > 400 {
			t.Errorf("%s is %d bytes, over 400", e.Name(), info.Size())
		}
	}
	if strings.Join(names, ",") != "audit.jsonl,audit.refused.jsonl,audit.refused.jsonl.1" {
		t.Errorf("files: %v", names)
	}
}

// TestRefusalsOfAFloodAreBounded: a minute of 100,000 refusals from 1,001
// addresses is maxRefusalKeys+1 lines that count every one of them.
func TestRefusalsOfAFloodAreBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := openAudit(AuditConfig{Path: filepath.Join(dir, "audit.jsonl")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 27, 10, 0, 5, 0, time.UTC)}
	a.now = clock.now
	for i := range 100_000 {
		remote := "10.0.0.1"
		if i%100 == 0 {
			remote = fmt.Sprintf("10.1.%d.%d", i/25600, i/100%256)
		}
		if err := a.write(AuditRecord{Kind: AuditKindAuth, Remote: remote, Reason: "invalid_token: unknown API key"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	refused := auditLines(t, filepath.Join(dir, "audit.refused.jsonl"))
	total := 0
	for _, r := range refused {
		total += r.Count
	}
	if len(refused) != maxRefusalKeys+1 || total != 100_000 || refused[1].Remote != "10.0.0.1" || refused[1].Count != 99_000 {
		t.Errorf("%d lines counting %d refusals; the second: %+v", len(refused), total, refused[1])
	}
}

// TestRefusalsAreCountedPerAddressAndMinute: a line per remote address and
// reason a minute, with the count, in the order first seen; the minute's
// lines are written when it ends (the next refusal, the timer, or close),
// and addresses past the bound are counted on one line of their own.
func TestRefusalsAreCountedPerAddressAndMinute(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := openAudit(AuditConfig{Path: filepath.Join(dir, "audit.jsonl")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	refusedPath := filepath.Join(dir, "audit.refused.jsonl")
	clock := &fakeClock{t: time.Date(2026, 11, 27, 10, 0, 59, 0, time.UTC)}
	a.now = clock.now
	refuse := func(remote, reason string, n int) {
		for range n {
			if err := a.write(AuditRecord{Kind: AuditKindAuth, Outcome: "UNAUTHORIZED", Remote: remote, Reason: reason}); err != nil {
				t.Fatal(err)
			}
		}
	}
	refuse("192.0.2.1", "no credential", 3)
	refuse("192.0.2.2", "invalid_token: unknown API key", 1)
	refuse("192.0.2.1", "invalid_token: unknown API key", 2)
	refuse("192.0.2.1", "no credential", 1)
	if got := auditLines(t, refusedPath); len(got) != 0 {
		t.Fatalf("lines written before their minute ended: %+v", got)
	}
	// The next minute's first refusal writes the last minute's lines.
	clock.set(time.Date(2026, 11, 27, 10, 1, 0, 0, time.UTC))
	refuse("192.0.2.3", "no credential", 1)
	got := auditLines(t, refusedPath)
	want := []string{"192.0.2.1 no credential 4", "192.0.2.2 invalid_token: unknown API key 1", "192.0.2.1 invalid_token: unknown API key 2"}
	if len(got) != len(want) {
		t.Fatalf("lines of the first minute: %+v", got)
	}
	for i, r := range got {
		if s := fmt.Sprintf("%s %s %d", r.Remote, r.Reason, r.Count); s != want[i] || r.Time != "2026-11-27T10:00:00Z" {
			t.Errorf("line %d: %s at %s, want %s", i, s, r.Time, want[i])
		}
	}
	// The timer writes a minute's lines once it has ended, not before.
	a.flushDue()
	if n := len(auditLines(t, refusedPath)); n != 3 {
		t.Fatalf("the timer wrote a minute that had not ended: %d lines", n)
	}
	clock.set(time.Date(2026, 11, 27, 10, 2, 0, 0, time.UTC))
	a.flushDue()
	got = auditLines(t, refusedPath)
	if len(got) != 4 || got[3].Remote != "192.0.2.3" || got[3].Count != 1 || got[3].Time != "2026-11-27T10:01:00Z" {
		t.Fatalf("after the timer: %+v", got)
	}
	// Past maxRefusalKeys addresses a minute, one line counts the rest.
	for i := range maxRefusalKeys + 50 {
		refuse(fmt.Sprintf("2001:db8::%x", i), "no credential", 2)
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	got = auditLines(t, refusedPath)[4:]
	if len(got) != maxRefusalKeys+1 {
		t.Fatalf("%d lines for %d addresses", len(got), maxRefusalKeys+50)
	}
	last := got[len(got)-1]
	if last.Remote != "" || last.Count != 100 || !strings.Contains(last.Reason, "more addresses") {
		t.Errorf("the overflow line: %+v", last)
	}
}

func TestRefusedAuditPath(t *testing.T) {
	for path, want := range map[string]string{
		"/var/log/sandbox/audit.jsonl": "/var/log/sandbox/audit.refused.jsonl",
		"audit":                        "audit.refused",
		"/var/log.d/audit":             "/var/log.d/audit.refused",
	} {
		if got := refusedAuditPath(path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// TestPassThroughRequestsAreAudited: resources/read, prompts/get and
// completion/complete are audit lines, refused ones too, with the size and
// hash of what was asked for and never the value.
func TestPassThroughRequestsAreAudited(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	settings := DefaultSettings()
	settings.Audit = &AuditConfig{Path: path}
	g := policyGateway(t, settings, false)
	caller := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	ctx := context.Background()
	if _, err := g.ReadResource(ctx, caller, "file:///etc/secret-plans"); err == nil {
		t.Fatal("read a resource nobody lists")
	}
	if _, err := g.GetPrompt(ctx, caller, "a__nothing", map[string]string{"topic": "secret-topic"}); err == nil {
		t.Fatal("got a prompt nobody lists")
	}
	if _, err := g.Complete(ctx, caller, json.RawMessage(`{"ref": {"type": "ref/prompt", "name": "a__nothing"}, "argument": {"name": "topic", "value": "secret-value"}}`)); err == nil {
		t.Fatal("completed a prompt nobody lists")
	}
	g.Close()
	lines := auditLines(t, path)
	var got []string
	for _, r := range lines {
		if r.Principal != "alice" || r.Session != "s1" || r.ArgBytes == 0 || len(r.ArgsSHA256) != 64 {
			t.Errorf("a pass-through line: %+v", r)
		}
		got = append(got, fmt.Sprintf("%s %s %s", r.Kind, r.Name, r.Outcome))
	}
	if want := "resource  NOT_FOUND,prompt a__nothing NOT_FOUND,completion a__nothing NOT_FOUND"; strings.Join(got, ",") != want {
		t.Errorf("lines: %s, want %s", strings.Join(got, ","), want)
	}
	if len(lines) > 0 && lines[0].ArgsSHA256 != sha256Hex([]byte("file:///etc/secret-plans")) {
		t.Errorf("the resource line's hash is not the URI's: %+v", lines[0])
	}
	data, _ := os.ReadFile(path)
	for _, secret := range []string{"secret-plans", "secret-topic", "secret-value"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the audit log holds %q", secret)
		}
	}
}
