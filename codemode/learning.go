package codemode

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// Learning from use. The tools a session calls after a search are evidence
// for that search's words: an agent that searched "list all projects",
// was shown other tools, searched again and then called
// tracker.list_projects tells the next agent that searches those words
// where to look. The evidence is kept per deployment (a UsageStore: in
// memory and a file, or Redis for replicas) and read when a search ranks.
//
// What counts: a call of a catalog tool that the gateway answered (not an
// error, not isError), made by a session within learnWindow of its
// searches (its last learnSearches of them), or by the run of an
// execute_code whose intent named the task. Each search credits at most
// MaxUsageTools tools, each once. A caller without a session is credited
// only for its runs' own intents: nothing else ties its requests together.
//
// How it ranks: for a search with words W, a tool t gains
//
//	learnWeight × (1/|W|) × Σ_{w in W} n(w,t) / (N(w) + learnPrior)
//
// where n(w,t) counts the principals that called t after searching with w
// and N(w) all the principals' pairs of w: each word votes for the tools
// people called after it, in proportion, and more surely the more people
// did. A principal counts once per (word, tool) however often it calls, so
// what one principal can add to any tool's score for anyone is at most
// learnWeight/(1+learnPrior) (0.14 of a score whose best hit is 1), and a
// tool the caller may not see is never shown because of it (the same
// filter as every hit). Tools the intent names stay first.

// The weights of learning. learnWeight is the most learning adds to a
// tool's score when every principal that searched with the words went on to
// call it (1: the best hit's score, so consensus can lift a tool from the
// bottom of the index's candidates to the top); learnPrior is how many
// principals' agreement it takes to reach half of that (6: so a lone
// principal adds at most 1/7 of the best hit's score, 0.14, to anyone's
// ranking). Measured by replaying recorded sessions (TestLearningReplay
// weighs other choices too; docs/codemode.md).
const (
	learnWeight = 1.0
	learnPrior  = 6.0
)

const (
	// learnWindow: a session's call is evidence for its searches of the
	// last 10 minutes.
	learnWindow = 10 * time.Minute
	// learnSearches: its last 3 searches (the one that missed and the one
	// that found the tool by name, say).
	learnSearches = 3
	// maxLearnSessions bounds the sessions whose searches are remembered,
	// in two generations (sessions end without telling code mode).
	maxLearnSessions = 4096
	// learnQueue bounds the records waiting for the store; past it they
	// are dropped (a store that is slow or down must not slow calls).
	learnQueue = 256
	// learnTimeout bounds reading the evidence for a search, and
	// recordTimeout one record.
	learnTimeout  = 250 * time.Millisecond
	recordTimeout = 2 * time.Second
)

// learning is the engine's side of learning from use: the sessions'
// recent searches, the records on their way to the store, and the boosts
// a search gets.
type learning struct {
	store UsageStore
	log   *slog.Logger
	now   func() time.Time

	weight, prior float64 // learnWeight and learnPrior (a test weighs others)

	mu        sync.Mutex
	cur, prev map[instructionsKey][]*searchMemo // a session's recent searches, oldest first

	queue     chan usageRecord
	closed    bool // no more records: the queue is closed (mu)
	closeOnce sync.Once
	pending   sync.WaitGroup // records enqueued and not yet written (settle)
	done      chan struct{}
}

// searchMemo is one search whose words later calls are evidence for.
type searchMemo struct {
	words    []string
	at       time.Time
	credited map[string]bool // tools already recorded for it
}

type usageRecord struct {
	principal    string
	words, tools []string
}

func newLearning(store UsageStore, log *slog.Logger) *learning {
	l := &learning{store: store, log: log, now: time.Now, weight: learnWeight, prior: learnPrior,
		queue: make(chan usageRecord, learnQueue), done: make(chan struct{})}
	go l.run()
	return l
}

// run writes the records to the store, one at a time, until close.
func (l *learning) run() {
	defer close(l.done)
	for r := range l.queue {
		l.record(r)
		l.pending.Done()
	}
}

// record writes one record. A goroutine of learning's own, which nothing
// else recovers: a store that panics loses the record, not the process.
func (l *learning) record(r usageRecord) {
	defer func() {
		if p := recover(); p != nil {
			logx.Panic(l.log, "code mode: recording what a search led to panicked; the record is lost", p)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := l.store.Record(ctx, r.principal, r.words, r.tools); err != nil {
		l.log.Warn("code mode: what a search led to could not be recorded", "err", err)
	}
}

// close stops taking records and waits for those taken; closing again
// does nothing.
func (l *learning) close() {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		close(l.queue)
	})
	<-l.done
}

// settle waits until the records taken so far are written (tests).
func (l *learning) settle() { l.pending.Wait() }

// learnWords are the words of an intent that learning keys on: the task's
// words (taskWords) without a plural s, by their first 5 letters as why
// compares them ("tasks" and "task" are one word, "projects" and
// "project" too).
func learnWords(intent string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range taskWords([]string{intent}) {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if s := stem(w); !seen[s] && len(out) < MaxUsageWords {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// searched remembers a session's search, whose words its next calls are
// evidence for.
func (l *learning) searched(caller auth.Caller, words []string) {
	if !caller.HasSession() || len(words) == 0 {
		return
	}
	key := instructionsKey{principal: caller.Principal.Key(), session: caller.Session}
	memo := &searchMemo{words: words, at: l.now(), credited: map[string]bool{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	recent, ok := l.cur[key]
	if !ok {
		if l.cur == nil || len(l.cur) >= maxLearnSessions {
			l.prev, l.cur = l.cur, map[instructionsKey][]*searchMemo{}
		}
		recent = l.prev[key]
	}
	recent = append(recent, memo)
	if len(recent) > learnSearches {
		recent = append([]*searchMemo(nil), recent[len(recent)-learnSearches:]...)
	}
	l.cur[key] = recent
}

// runMemo is the search a run's own intent stands for (nil without one).
func (l *learning) runMemo(intent string) *searchMemo {
	words := learnWords(intent)
	if len(words) == 0 {
		return nil
	}
	return &searchMemo{words: words, at: l.now(), credited: map[string]bool{}}
}

// called credits tool, which caller's run called and the gateway answered,
// to the session's recent searches and the run's own intent (run, or nil).
func (l *learning) called(caller auth.Caller, run *searchMemo, tool string) {
	var records []usageRecord
	l.mu.Lock()
	memos := []*searchMemo{}
	if run != nil {
		memos = append(memos, run)
	}
	if caller.HasSession() {
		key := instructionsKey{principal: caller.Principal.Key(), session: caller.Session}
		recent, ok := l.cur[key]
		if !ok {
			recent = l.prev[key]
		}
		memos = append(memos, recent...)
	}
	since := l.now().Add(-learnWindow)
	for _, m := range memos {
		if m.at.Before(since) || m.credited[tool] || len(m.credited) >= MaxUsageTools {
			continue
		}
		m.credited[tool] = true
		records = append(records, usageRecord{principal: caller.Principal.Key(), words: m.words, tools: []string{tool}})
	}
	// enqueued under mu, so that close cannot close the queue between
	// the check and the send (the send never blocks)
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	for _, r := range records {
		l.pending.Add(1)
		select {
		case l.queue <- r:
		default:
			l.pending.Done() // dropped: the store is behind
		}
	}
}

// learnedBoost is what learning says of one tool for a search.
type learnedBoost struct {
	boost float64
	// principals is the most principals that called the tool after
	// searching with one of the search's words.
	principals int
}

// boosts reads the evidence for a search's words and weighs it (the
// formula above); nil when there is none or the store does not answer in
// time (a search never waits long for learning).
func (l *learning) boosts(ctx context.Context, words []string) map[string]learnedBoost {
	if len(words) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, learnTimeout)
	defer cancel()
	evidence, err := l.store.Evidence(ctx, words)
	if err != nil {
		l.log.Warn("code mode: what searches led to could not be read; ranking without it", "err", err)
		return nil
	}
	if len(evidence) == 0 {
		return nil
	}
	out := map[string]learnedBoost{}
	for _, w := range words {
		total := 0
		for _, n := range evidence[w] {
			total += n
		}
		for tool, n := range evidence[w] {
			t := out[tool]
			t.boost += l.weight * float64(n) / (float64(total) + l.prior) / float64(len(words))
			t.principals = max(t.principals, n)
			out[tool] = t
		}
	}
	return out
}

// rerank orders hits by their score plus what learning adds, after the
// tools the intent names, and adds the tools learning knows for the words
// that the index did not return (scored as its last hit: no better than
// anything it found), when visible says the caller may see them. It
// returns the best k.
func rerank(hits []vectorindex.Hit, boosts map[string]learnedBoost, visible func(id string) bool, k int) []vectorindex.Hit {
	floor := 0.0
	if len(hits) > 0 {
		floor = hits[len(hits)-1].Score
	}
	in := map[string]bool{}
	for _, h := range hits {
		in[h.ID] = true
	}
	out := append([]vectorindex.Hit(nil), hits...)
	var extra []string
	for id := range boosts {
		if !in[id] && visible(id) {
			extra = append(extra, id)
		}
	}
	sort.Strings(extra)
	for _, id := range extra {
		out = append(out, vectorindex.Hit{ID: id, Score: floor, Weak: true})
	}
	for i := range out {
		b := boosts[out[i].ID]
		out[i].Score += b.boost
		// a tool several principals called after these words is no guess
		out[i].Weak = out[i].Weak && b.principals < 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Named != out[j].Named {
			return out[i].Named
		}
		return out[i].Score > out[j].Score
	})
	out = out[:min(k, len(out))]
	prev := 1.0 // scores fall with the order, at most 1, as the index's
	for i := range out {
		out[i].Score = min(out[i].Score, prev)
		prev = out[i].Score
	}
	return out
}
