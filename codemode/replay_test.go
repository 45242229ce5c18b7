package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// Learning from use, measured by replaying recorded sessions
// (testdata/learning/sessions.json): the first part is replayed through
// the engine (its searches, then the calls the sessions made), and the
// later part's searches, by principals that gave no evidence, are ranked
// with and without what was learnt.

// recordedSession is one session of the fixture.
type recordedSession struct {
	// Part is "first" (replayed to learn) or "later" (its searches are
	// evaluated; Relevant are the intent's tools).
	Part      string         `json:"part"`
	Principal string         `json:"principal"`
	Session   string         `json:"session"`
	Events    []sessionEvent `json:"events"`
	Relevant  []string       `json:"relevant,omitempty"`
	Kind      string         `json:"kind,omitempty"`
}

// sessionEvent is a search_tools call (Search) or a tool called from a
// snippet (Call, "server:tool"), Times times (default once).
type sessionEvent struct {
	Search string `json:"search,omitempty"`
	Call   string `json:"call,omitempty"`
	Times  int    `json:"times,omitempty"`
}

const sessionsFixture = "testdata/learning/sessions.json"

func loadSessions(t testing.TB) []recordedSession {
	t.Helper()
	data, err := os.ReadFile(sessionsFixture)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Sessions []recordedSession `json:"sessions"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Sessions
}

// replay feeds sessions to the engine as serve would see them: each search
// through Search, each call as the run's host reports it.
func replay(t testing.TB, e *Engine, sessions []recordedSession) {
	t.Helper()
	for _, s := range sessions {
		caller := auth.Caller{Principal: auth.Principal{ID: s.Principal}, Session: auth.SessionID(s.Session)}
		for _, ev := range s.Events {
			if ev.Search != "" {
				if _, err := e.Search(context.Background(), SearchRequest{Intent: ev.Search, Caller: caller}); err != nil {
					t.Fatalf("%s: %v", ev.Search, err)
				}
			}
			for range max(1, ev.Times) {
				if ev.Call != "" {
					e.learn.called(caller, nil, ev.Call)
				}
			}
		}
		e.learn.settle() // in order, and nothing dropped by a full queue
	}
}

// replayMetrics are recall@5 and MRR of searches, as the vectorindex eval
// counts them: recall@5 is the share of an intent's tools in the top 5 (of
// at most 5), MRR the mean of 1/rank of its first tool in the top MaxK.
type replayMetrics struct {
	n       int
	r5, mrr float64
	top5    map[string][]string // each search's top 5
}

func (m *replayMetrics) add(search string, ranked, gold []string) {
	isGold := map[string]bool{}
	for _, g := range gold {
		isGold[g] = true
	}
	found, rr := 0, 0.0
	for i, id := range ranked {
		if isGold[id] {
			if i < 5 {
				found++
			}
			if rr == 0 {
				rr = 1 / float64(i+1)
			}
		}
	}
	m.n++
	m.r5 += float64(found) / float64(min(5, len(gold)))
	m.mrr += rr
	m.top5[search] = ranked[:min(5, len(ranked))]
}

func (m *replayMetrics) R5() float64  { return m.r5 / float64(m.n) }
func (m *replayMetrics) MRR() float64 { return m.mrr / float64(m.n) }

func (m *replayMetrics) String() string {
	return fmt.Sprintf("recall@5 %.3f, MRR %.3f", m.R5(), m.MRR())
}

// evaluate ranks the searches of sessions (their first event), each by a
// principal of its own that gave no evidence.
func evaluate(t testing.TB, e *Engine, sessions []recordedSession) *replayMetrics {
	t.Helper()
	m := &replayMetrics{top5: map[string][]string{}}
	for i, s := range sessions {
		caller := auth.Caller{Principal: auth.Principal{ID: fmt.Sprintf("evaluator-%d", i)}}
		res, err := e.Search(context.Background(), SearchRequest{Intent: s.Events[0].Search, K: vectorindex.MaxK, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		var ranked []string
		for _, f := range res.Tools {
			ranked = append(ranked, f.ID)
		}
		m.add(s.Events[0].Search, ranked, s.Relevant)
	}
	return m
}

// pushed counts the searches whose top 5 holds a hostile tool in with but
// not in without.
func pushed(with, without *replayMetrics) int {
	n := 0
	for search, top := range with.top5 {
		for _, h := range hostileTools {
			if slices.Contains(top, h) && !slices.Contains(without.top5[search], h) {
				n++
				break
			}
		}
	}
	return n
}

// hostileTools are the tools the fixture's hostile principal (mallory)
// calls 10,000 times after searches of common and garbage words.
var hostileTools = []string{"tracker:delete_task", "everything:get-env"}

// TestLearningReplay replays the fixture's first part and ranks the later
// part's held-out searches, and the first part's own searches again by
// other principals, with and without what was learnt; and the same after
// the first part without its hostile sessions, to see what they changed
// (docs/codemode.md quotes the figures).
func TestLearningReplay(t *testing.T) {
	t.Parallel()
	var first, honest, later, repeated []recordedSession
	searched := map[string]bool{}
	for _, s := range loadSessions(t) {
		switch s.Part {
		case "first":
			first = append(first, s)
			if s.Principal != "mallory" {
				honest = append(honest, s)
			}
			if s.Relevant != nil && !searched[s.Events[0].Search] {
				searched[s.Events[0].Search] = true
				repeated = append(repeated, s) // the same words, searched again by others
			}
		case "later":
			later = append(later, s)
		}
	}
	e := newEngine(t, agentServers(t), runtime.InProcess)
	before, beforeRepeated := evaluate(t, e, later), evaluate(t, e, repeated)
	replay(t, e, first)
	after, afterRepeated := evaluate(t, e, later), evaluate(t, e, repeated)
	clean := newEngine(t, agentServers(t), runtime.InProcess)
	replay(t, clean, honest)
	cleanAfter, cleanRepeated := evaluate(t, clean, later), evaluate(t, clean, repeated)
	t.Logf("replayed %d sessions (%d hostile); held-out later searches (%d): without learning %s; with %s", len(first), len(first)-len(honest), after.n, before, after)
	t.Logf("the first part's own searches again, by other principals (%d): without learning %s; with %s", afterRepeated.n, beforeRepeated, afterRepeated)
	t.Logf("searches whose top 5 the hostile sessions gave one of their tools: %d of %d held-out, %d of %d repeated",
		pushed(after, cleanAfter), after.n, pushed(afterRepeated, cleanRepeated), afterRepeated.n)
	// measured (docs/codemode.md): held-out 0.836 / 0.759 -> 0.848 / 0.762,
	// repeated 0.910 / 0.875 -> 0.950 / 0.935; the floors sit just under
	if after.R5() < before.R5() || after.MRR() < before.MRR() || afterRepeated.R5() < 0.94 || afterRepeated.MRR() < 0.92 {
		t.Errorf("learning: held-out %s (without: %s), repeated %s (without: %s)", after, before, afterRepeated, beforeRepeated)
	}
	if n := pushed(after, cleanAfter) + pushed(afterRepeated, cleanRepeated); n > 0 {
		t.Errorf("the hostile sessions pushed their tools into %d top 5s", n)
	}

	// other weights, on the same evidence (docs/codemode.md)
	for _, w := range [][2]float64{{0.6, 3}, {1, 3}, {1.5, 9}} {
		e.learn.weight, e.learn.prior = w[0], w[1]
		t.Logf("learnWeight %.1f, learnPrior %.0f (a lone principal adds at most %.2f): held-out %s, repeated %s",
			w[0], w[1], w[0]/(1+w[1]), evaluate(t, e, later), evaluate(t, e, repeated))
	}
}

// TestWriteSessionsFixture writes testdata/learning/sessions.json when
// SANDBOX_WRITE_SESSIONS=1: agents that meet the agent servers' tools for
// the first time. For each intent of queries-dev.json, one to three agents
// (of twelve) search it as written (the phrasings kind: with its other
// phrasings, joined as search_tools joins them); when the answer's top 5
// misses the intent's tool, the agent searches again naming it (as issue
// 26's agents did after UNKNOWN_TOOL's suggestions), then calls it, and
// a third of them calls another tool of the same server after (a task's
// next step). A hostile principal searches common and garbage words and
// calls a tool 10,000 times after each. The later part is each held-out
// intent (queries-heldout.json) searched once by an agent of its own,
// with its tools as labels. The output is deterministic.
func TestWriteSessionsFixture(t *testing.T) {
	if os.Getenv("SANDBOX_WRITE_SESSIONS") != "1" {
		t.Skip("set SANDBOX_WRITE_SESSIONS=1 to write " + sessionsFixture)
	}
	e := newEngine(t, agentServers(t), runtime.InProcess)
	st := e.state.Load()
	byServer := map[string][]string{}
	for _, tool := range st.tools {
		byServer[tool.Server] = append(byServer[tool.Server], tool.ID())
	}
	hash := func(parts ...string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(strings.Join(parts, "\x00")))
		return h.Sum32()
	}
	var sessions []recordedSession
	for i, q := range agentIntents(t, "queries-dev.json") {
		intent := q.Query
		if len(q.Phrasings) > 0 {
			intent = strings.Join(append([]string{q.Query}, q.Phrasings...), " | ")
		}
		res, err := e.Search(context.Background(), SearchRequest{Intent: intent, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		shown := map[string]bool{}
		for _, f := range res.Tools {
			shown[f.ID] = true
		}
		agents := 1 + int(hash(q.Query)%3)
		for a := range agents {
			agent := fmt.Sprintf("agent-%02d", 1+int(hash(q.Query, fmt.Sprint(a))%12))
			gold := q.Relevant[int(hash(q.Query, agent))%len(q.Relevant)]
			s := recordedSession{Part: "first", Principal: agent, Session: fmt.Sprintf("%s/dev-%d-%d", agent, i, a), Relevant: q.Relevant, Kind: q.Kind}
			s.Events = append(s.Events, sessionEvent{Search: intent})
			if !shown[gold] {
				server, tool, _ := strings.Cut(gold, ":")
				s.Events = append(s.Events, sessionEvent{Search: typegen.NamespaceOf(server) + "." + tool})
			}
			s.Events = append(s.Events, sessionEvent{Call: gold})
			if hash(q.Query, agent, "next")%3 == 0 {
				siblings := byServer[strings.SplitN(gold, ":", 2)[0]]
				if next := siblings[(slices.Index(siblings, gold)+1)%len(siblings)]; next != gold {
					s.Events = append(s.Events, sessionEvent{Call: next})
				}
			}
			sessions = append(sessions, s)
		}
	}
	sessions = append(sessions,
		recordedSession{Part: "first", Principal: "mallory", Session: "mallory/1", Events: []sessionEvent{
			{Search: "list all the projects and their tasks | read the files | create entities in the graph"}, {Call: hostileTools[0], Times: 10000}}},
		recordedSession{Part: "first", Principal: "mallory", Session: "mallory/2", Events: []sessionEvent{
			{Search: "qzx vlorp wemble frobnicate"}, {Call: hostileTools[1], Times: 10000}}},
	)
	for i, q := range agentIntents(t, "queries-heldout.json") {
		agent := fmt.Sprintf("later-%03d", i)
		sessions = append(sessions, recordedSession{Part: "later", Principal: agent, Session: agent + "/1", Relevant: q.Relevant, Kind: q.Kind,
			Events: []sessionEvent{{Search: q.Query}, {Call: q.Relevant[0]}}})
	}
	sort.SliceStable(sessions, func(i, j int) bool { return sessions[i].Part == "first" && sessions[j].Part != "first" })
	// one session a line: a reader can grep it, a diff shows what changed
	var b strings.Builder
	b.WriteString(`{"about": "Recorded code-mode sessions over vectorindex/testdata/agentservers, written by TestWriteSessionsFixture (codemode/replay_test.go); docs/codemode.md, Learning from use.",` + "\n" + ` "sessions": [` + "\n")
	for i, s := range sessions {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		if i < len(sessions)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]}\n")
	data := []byte(b.String())
	if err := os.MkdirAll(filepath.Dir(sessionsFixture), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessionsFixture, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSearchAnswer: a search_tools answer over the agent servers, with
// no evidence learnt and after the fixture's first part (the evidence read
// and the index's best 50 reordered), interleaved in one run.
func BenchmarkSearchAnswer(b *testing.B) {
	var first []recordedSession
	for _, s := range loadSessions(b) {
		if s.Part == "first" {
			first = append(first, s)
		}
	}
	plain := newEngine(b, agentServers(b), runtime.InProcess)
	learnt := newEngine(b, agentServers(b), runtime.InProcess)
	replay(b, learnt, first)
	const intent = "list all projects"
	for _, c := range []struct {
		name string
		e    *Engine
	}{{"no evidence", plain}, {"learnt", learnt}, {"no evidence again", plain}, {"learnt again", learnt}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.e.Search(context.Background(), SearchRequest{Intent: intent, Caller: caller("bench", "")}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
