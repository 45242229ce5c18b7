package redisstate_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/internal/redistest"
	"github.com/sandboxrt/sandbox/state/redisstate"
	"github.com/sandboxrt/sandbox/state/statetest"
)

func newKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// clients opens a client per test on one server, each under its own key
// prefix, so each gets an empty store.
func clients(tb testing.TB) (*redistest.Server, func(t testing.TB) *redisstate.Client) {
	srv := redistest.Start(tb)
	n := 0
	key := newKey()
	return srv, func(t testing.TB) *redisstate.Client {
		n++
		c, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: fmt.Sprintf("t%d:", n), EncryptionKey: key})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
}

func TestRedisState(t *testing.T) {
	srv, open := clients(t)
	t.Run("rate limiter", func(t *testing.T) {
		statetest.TestRateLimiter(t, func(t *testing.T, now func() time.Time) gateway.RateLimiter { return open(t).RateLimiter(now) })
	})
	t.Run("store", func(t *testing.T) {
		statetest.TestStore(t, func(t *testing.T, limits codemode.StoreLimits, now func() time.Time) codemode.Store {
			return open(t).Store(limits, now)
		})
	})
	t.Run("tokens", func(t *testing.T) {
		statetest.TestTokenStore(t, func(t *testing.T) gateway.TokenStore { return open(t).TokenStore() })
	})
	t.Run("big results", func(t *testing.T) {
		statetest.TestResultStore(t, func(t *testing.T, limits codemode.ResultLimits, now func() time.Time) codemode.ResultStore {
			return open(t).ResultStore(limits, now)
		})
	})
	t.Run("scripts", func(t *testing.T) {
		statetest.TestScriptStore(t, func(t *testing.T) codemode.ScriptStore { return open(t).ScriptStore() })
	})
	t.Run("oauth grants", func(t *testing.T) {
		statetest.TestOAuthStore(t, func(t *testing.T) gateway.OAuthStore { return open(t).OAuthStore() })
	})
	t.Run("approval desk", func(t *testing.T) {
		statetest.TestDeskStore(t, func(t *testing.T) gateway.DeskStore { return open(t).DeskStore(nil) })
	})
	t.Run("sign-ins", func(t *testing.T) {
		statetest.TestSignInStore(t, func(t *testing.T) gateway.SignInStore { return open(t).SignInStore(nil) })
	})
	t.Run("usage", func(t *testing.T) {
		statetest.TestUsageStore(t, func(t *testing.T, now func() time.Time) codemode.UsageStore { return open(t).Usage(now) })
	})
	t.Run("released runs", func(t *testing.T) {
		statetest.TestReleasedRunStore(t, func(t *testing.T, maxBytes int64, now func() time.Time) frontend.ReleasedRunStore {
			return open(t).ReleasedRuns(maxBytes, now)
		})
	})
	t.Run("approval questions", func(t *testing.T) {
		statetest.TestQuestionLedger(t, func(t *testing.T) gateway.QuestionLedger { return open(t).QuestionLedger() },
			func(t *testing.T) (gateway.QuestionLedger, gateway.QuestionLedger) {
				// Two replicas: two pools on one prefix.
				var replicas [2]gateway.QuestionLedger
				for i := range replicas {
					c, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: "shared-questions:", EncryptionKey: newKey()})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					replicas[i] = c.QuestionLedger()
				}
				return replicas[0], replicas[1]
			})
	})
}

// TestSecretsAreEncrypted: what Redis holds of tokens and grants is
// ciphertext; another encryption key cannot read it, and a value moved to
// another key does not decrypt.
func TestSecretsAreEncrypted(t *testing.T) {
	srv, open := clients(t)
	ctx := context.Background()
	c := open(t)
	const secret = "ghp_very-secret-token-value"
	if err := c.TokenStore().SetToken(ctx, gateway.TokenScope{Principal: "acme/alice", Session: "s1"}, "gh", secret); err != nil {
		t.Fatal(err)
	}
	if err := c.OAuthStore().Update(ctx, "operator", "gh", func(*gateway.OAuthGrant) *gateway.OAuthGrant {
		g := &gateway.OAuthGrant{URL: "https://gh/mcp"}
		g.Token.AccessToken = secret
		return g
	}); err != nil {
		t.Fatal(err)
	}
	// An approval's question shows the tool's arguments.
	desk := c.DeskStore(nil)
	if err := desk.Put(ctx, gateway.PendingApproval{ID: "q1", Principal: "acme/alice", Question: "token: " + secret, Deadline: time.Now().Add(time.Minute)}, 4); err != nil {
		t.Fatal(err)
	}
	// A sign-in holds its PKCE verifier and its client's secret.
	signIns := c.SignInStore(nil)
	if err := signIns.Put(ctx, gateway.SignInRecord{ID: "l1", Owner: "acme/alice", Expires: time.Now().Add(time.Minute)}, 4); err != nil {
		t.Fatal(err)
	}
	if err := signIns.Update(ctx, "l1", func(r *gateway.SignInRecord) error {
		r.Login = &gateway.SignInLogin{State: "st", Verifier: secret, Client: gateway.OAuthGrant{ClientSecret: secret}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()
	keys, _ := raw.Keys(ctx, "*").Result()
	if len(keys) < 4 {
		t.Fatalf("keys: %v", keys)
	}
	for _, k := range keys {
		dump, _ := raw.Dump(ctx, k).Result()
		if strings.Contains(dump, secret) || strings.Contains(dump, "ghp_") {
			t.Fatalf("%s holds the token in clear", k)
		}
	}
	other, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: "t1:", EncryptionKey: newKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, err := other.TokenStore().Token(ctx, gateway.TokenScope{Principal: "acme/alice", Session: "s1"}, "gh"); err == nil || !strings.Contains(err.Error(), "encryptionKey") {
		t.Fatalf("another key read the token: %v", err)
	}
	// Bob's hash given alice's sealed token: it does not decrypt there.
	sealed, _ := raw.HGet(ctx, "t1:tokens:acme%2Falice:s1", "gh").Result()
	raw.HSet(ctx, "t1:tokens:acme%2Fbob:s1", "gh", sealed)
	if tok, ok, err := c.TokenStore().Token(ctx, gateway.TokenScope{Principal: "acme/bob", Session: "s1"}, "gh"); err == nil || ok {
		t.Fatalf("a moved token decrypted: %q %v %v", tok, ok, err)
	}
}

// TestRedisDown: calls fail fast with an error that says Redis is
// unavailable, and work again once it is back, without a new client.
func TestRedisDown(t *testing.T) {
	srv, open := clients(t)
	ctx := context.Background()
	c := open(t)
	rl := c.RateLimiter(nil)
	limit := gateway.RateLimit{PerSecond: 100, Burst: 10}
	if _, ok, err := rl.Reserve(ctx, "k", limit, 0); !ok || err != nil {
		t.Fatalf("before: %v %v", ok, err)
	}
	srv.Stop()
	start := time.Now()
	if _, _, err := rl.Reserve(ctx, "k", limit, 0); err == nil || !strings.Contains(err.Error(), "redis is unavailable") {
		t.Fatalf("while down: %v", err)
	}
	if err := c.Ping(ctx); err == nil {
		t.Fatal("Ping while down")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing took %v", d)
	}
	srv.Restart()
	if _, ok, err := rl.Reserve(ctx, "k", limit, 0); !ok || err != nil {
		t.Fatalf("after Redis came back: %v %v", ok, err)
	}
}

func TestOpenChecksTheConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  redisstate.Config
		want string
	}{
		{redisstate.Config{URL: "http://h", EncryptionKey: newKey()}, "redis URL"},
		{redisstate.Config{URL: "redis://127.0.0.1:1/0"}, "encryptionKey"},
		{redisstate.Config{URL: "redis://127.0.0.1:1/0", EncryptionKey: "c2hvcnQ="}, "32 random bytes"},
	} {
		if _, err := redisstate.Open(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.cfg, err)
		}
	}
}

// TestSessionDirectory: a claimed session has its principal and an empty
// state; its principal may save a state there (another may not); using it
// keeps it alive; unused, it idles out; released, it is gone; an id already
// claimed is not taken over.
func TestSessionDirectory(t *testing.T) {
	_, open := clients(t)
	ctx := context.Background()
	d := open(t).SessionDirectory()
	const idle = 300 * time.Millisecond
	if err := d.Claim(ctx, "s1", "acme/alice", idle); err != nil {
		t.Fatal(err)
	}
	if err := d.Save(ctx, "s1", "acme/alice", "servers", []byte(`["a"]`)); err != nil {
		t.Fatal(err)
	}
	if err := d.Save(ctx, "s1", "acme/alice", "logLevel", []byte(`debug`)); err != nil {
		t.Fatal(err)
	}
	_ = d.Save(ctx, "s1", "mallory", "servers", []byte(`[]`))
	for range 4 { // used every 150 ms: alive past its first idle period
		time.Sleep(idle / 2)
		if p, st, ok, err := d.Lookup(ctx, "s1", "acme/alice", idle); !ok || err != nil || p != "acme/alice" || string(st["servers"]) != `["a"]` || string(st["logLevel"]) != "debug" || len(st) != 2 {
			t.Fatalf("lookup: %q %q %v %v", p, st, ok, err)
		}
	}
	for range 4 { // looked up by another principal only: not kept alive
		time.Sleep(idle / 2)
		_, _, _, _ = d.Lookup(ctx, "s1", "mallory", idle)
	}
	if _, _, ok, _ := d.Lookup(ctx, "s1", "acme/alice", idle); ok {
		t.Fatal("an idle session is still there")
	}
	_ = d.Claim(ctx, "s2", "bob", time.Minute)
	_ = d.Claim(ctx, "s2", "mallory", time.Minute)
	if p, st, ok, _ := d.Lookup(ctx, "s2", "bob", time.Minute); !ok || p != "bob" || len(st) != 0 {
		t.Fatalf("after a second claim of bob's id: %q %q %v", p, st, ok)
	}
	if err := d.Release(ctx, "s2", "mallory"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := d.Lookup(ctx, "s2", "bob", time.Minute); !ok {
		t.Fatal("another principal released bob's session")
	}
	if err := d.Release(ctx, "s2", "bob"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := d.Lookup(ctx, "s2", "bob", time.Minute); ok {
		t.Fatal("a released session is still there")
	}
	if err := d.Save(ctx, "s2", "bob", "servers", []byte(`[]`)); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := d.Lookup(ctx, "s2", "bob", time.Minute); ok {
		t.Fatal("saving a released session's state brought it back")
	}
}

// TestSessionTokensExpireWithTheSession: a session's upstream tokens live
// while its directory entry does (kept alive by use) and go with it when it
// idles out on every replica, which no replica closes; a principal's own
// tokens do not expire.
func TestSessionTokensExpireWithTheSession(t *testing.T) {
	_, open := clients(t)
	ctx := context.Background()
	c := open(t)
	d, tokens := c.SessionDirectory(), c.TokenStore()
	const idle = 300 * time.Millisecond
	if err := d.Claim(ctx, "s1", "alice", idle); err != nil {
		t.Fatal(err)
	}
	session := gateway.TokenScope{Principal: "alice", Session: "s1"}
	if err := tokens.SetToken(ctx, session, "github", "tok-1"); err != nil {
		t.Fatal(err)
	}
	if err := tokens.SetToken(ctx, gateway.TokenScope{Principal: "alice"}, "github", "tok-p"); err != nil {
		t.Fatal(err)
	}
	for range 4 { // the session in use for twice its idle time
		time.Sleep(idle / 2)
		_, _, _, _ = d.Lookup(ctx, "s1", "alice", idle)
	}
	if tok, ok, err := tokens.Token(ctx, session, "github"); !ok || err != nil || tok != "tok-1" {
		t.Fatalf("the token of a session in use: %q %v %v", tok, ok, err)
	}
	time.Sleep(2 * idle)
	if _, ok, _ := tokens.Token(ctx, session, "github"); ok {
		t.Fatal("the token outlived its idle session")
	}
	if _, ok, _ := tokens.Token(ctx, gateway.TokenScope{Principal: "alice"}, "github"); !ok {
		t.Fatal("a principal's token expired")
	}
	// Released (a DELETE on any replica): its tokens go at once.
	_ = d.Claim(ctx, "s2", "alice", time.Minute)
	s2 := gateway.TokenScope{Principal: "alice", Session: "s2"}
	_ = tokens.SetToken(ctx, s2, "github", "tok-2")
	if err := d.Release(ctx, "s2", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := tokens.Token(ctx, s2, "github"); ok {
		t.Fatal("a released session's token is still there")
	}
}

// TestCallStreams: a handed-over call stream is read from any event on,
// whose it is comes with it, a retried append adds nothing twice, another
// principal cannot write to it, it is complete once its last event is in,
// and its lease runs out when the replica running the call stops renewing.
func TestCallStreams(t *testing.T) {
	_, open := clients(t)
	ctx := context.Background()
	s := open(t).CallStreams()
	info := frontend.StreamInfo{Session: "mcp-1", Principal: "alice"}
	evs := []frontend.StreamEvent{{Seq: 0}, {Seq: 1, Data: []byte(`{"progress":1}`)}, {Seq: 2, Data: []byte(`{"progress":2}`)}}
	for range 2 { // the second is a retry after a lost answer
		if err := s.Append(ctx, "cs_1", info, evs, false, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	got, read, complete, leased, ok, err := s.Read(ctx, "cs_1", 1)
	if err != nil || !ok || complete || !leased || got != info || len(read) != 2 || read[0].Seq != 1 || string(read[1].Data) != `{"progress":2}` {
		t.Fatalf("read from 1: %+v %+v complete=%v leased=%v ok=%v %v", got, read, complete, leased, ok, err)
	}
	if err := s.Append(ctx, "cs_1", frontend.StreamInfo{Session: "mcp-1", Principal: "mallory"}, []frontend.StreamEvent{{Seq: 3, Data: []byte(`{"result":"forged"}`)}}, true, time.Minute); err == nil {
		t.Fatal("another principal appended to alice's stream")
	}
	if err := s.Append(ctx, "cs_1", info, []frontend.StreamEvent{{Seq: 5, Data: []byte(`{"gap":true}`)}}, true, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, read, complete, _, _, _ := s.Read(ctx, "cs_1", 3); complete || len(read) != 0 {
		t.Fatalf("an append past a gap: %+v complete=%v", read, complete)
	}
	if err := s.Append(ctx, "cs_1", info, []frontend.StreamEvent{{Seq: 3, Data: []byte(`{"result":1}`)}}, true, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, read, complete, _, _, _ := s.Read(ctx, "cs_1", 0); !complete || len(read) != 4 || len(read[0].Data) != 0 || string(read[3].Data) != `{"result":1}` {
		t.Fatalf("the complete stream: %+v complete=%v", read, complete)
	}
	time.Sleep(400 * time.Millisecond)
	if _, _, _, leased, ok, _ := s.Read(ctx, "cs_1", 0); leased || !ok {
		t.Fatalf("after its lease: leased=%v ok=%v", leased, ok)
	}
	if _, _, _, _, ok, err := s.Read(ctx, "cs_none", 0); ok || err != nil {
		t.Fatalf("no such stream: ok=%v %v", ok, err)
	}
}

// TestShapeStoreUpdatesAreAtomic: replicas updating one entry at once lose
// none of each other's updates (a WATCH transaction, retried); Load has
// every entry.
func TestShapeStoreUpdatesAreAtomic(t *testing.T) {
	_, open := clients(t)
	ctx := context.Background()
	c := open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 4 {
		s := c.ShapeStore() // one per replica, one connection pool
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				errs <- s.Update(ctx, "s:t", func(cur []byte) ([]byte, error) {
					n, _ := strconv.Atoi(string(cur))
					return []byte(strconv.Itoa(n + 1)), nil
				})
			}
		}()
	}
	go func() { wg.Wait(); close(errs) }()
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			t.Log(err)
		}
	}
	all, v1, err := c.ShapeStore().Changes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := strconv.Atoi(string(all["s:t"])); got != 100-failed || v1 != int64(100-failed) {
		t.Fatalf("after 100 updates (%d refused as contended): %q, version %d", failed, all, v1)
	}
	if failed > 10 {
		t.Errorf("%d of 100 updates gave up", failed)
	}
	_ = c.ShapeStore().Update(ctx, "other:tool", func([]byte) ([]byte, error) { return []byte("1"), nil })
	if changed, v2, err := c.ShapeStore().Changes(ctx, v1); err != nil || len(changed) != 1 || string(changed["other:tool"]) != "1" || v2 != v1+1 {
		t.Fatalf("changes since %d: %q, version %d, %v", v1, changed, v2, err)
	}
	if changed, _, _ := c.ShapeStore().Changes(ctx, v1+1); len(changed) != 0 {
		t.Fatalf("changes since the last: %q", changed)
	}
	big := make([]byte, redisstate.MaxShapeEntryBytes+1)
	if err := c.ShapeStore().Update(ctx, "big:tool", func([]byte) ([]byte, error) { return big, nil }); err == nil {
		t.Fatal("an entry over the size limit was pooled")
	}
}

// TestUsageHoldsNoWordsOfDroppedPairs: a principal that records a new word
// with every search holds at most MaxUsagePairsPerPrincipal pairs, and so
// at most that many words' keys: a pair dropped to keep the bound takes
// its word's entry with it, or one principal fills Redis for UsageTTL.
func TestUsageHoldsNoWordsOfDroppedPairs(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: "u:", EncryptionKey: newKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	u := c.Usage(nil)
	if err := u.Record(ctx, "bob", []string{"w0000"}, []string{"s:t"}); err != nil {
		t.Fatal(err)
	}
	n := codemode.MaxUsagePairsPerPrincipal + 500
	for i := range n {
		if err := u.Record(ctx, "alice", []string{fmt.Sprintf("w%04d", i)}, []string{"s:t"}); err != nil {
			t.Fatal(err)
		}
	}
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()
	words, _ := raw.Keys(ctx, "u:usage:{usage}:w:*").Result()
	if len(words) > codemode.MaxUsagePairsPerPrincipal+1 {
		t.Errorf("%d words' keys for %d live pairs", len(words), codemode.MaxUsagePairsPerPrincipal+1)
	}
	if ev, _ := u.Evidence(ctx, []string{"w0000", fmt.Sprintf("w%04d", n-1)}); ev["w0000"]["s:t"] != 1 || ev[fmt.Sprintf("w%04d", n-1)]["s:t"] != 1 {
		t.Errorf("evidence: %v", ev)
	}
}
