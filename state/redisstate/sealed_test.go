package redisstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/internal/redistest"
	"github.com/sandboxrt/sandbox/state/redisstate"
)

// holding lists the keys whose name or content holds any of secrets (as
// written, or as %q writes it: Go's escaping of the bytes).
func holding(held map[string]string, secrets ...string) []string {
	var found []string
	for k, v := range held {
		for _, s := range secrets {
			if strings.Contains(k, s) || strings.Contains(v, s) || strings.Contains(k, url.QueryEscape(s)) {
				found = append(found, k)
			}
		}
	}
	return found
}

// TestUsersDataIsSealed: what users keep in Redis (a store value, a saved
// script, a detached call stream's events, a big result, the words of
// their searches, a released run's journal) is nowhere in Redis in clear, under any key or on its
// disk, and reads
// back whole; a sealed value moved to another principal's key does not
// decrypt there, and another encryption key reads nothing.
func TestUsersDataIsSealed(t *testing.T) {
	srv, open := clients(t)
	ctx := context.Background()
	c := open(t)
	const (
		value  = "alice-diary-entry-7731"
		code   = "return 'alice-script-body-5519'"
		event  = "alice-progress-message-2207"
		result = "alice-result-row-8843"
		word   = "confidentialacquisition"
		answer = "alice-tool-answer-6610"
	)

	alice := codemode.StoreScope{Principal: "acme/alice"}
	store := c.Store(codemode.StoreLimits{}, nil)
	if err := store.Set(ctx, alice, "diary", json.RawMessage(`{"entry":"`+value+`"}`), 0); err != nil {
		t.Fatal(err)
	}
	scripts := c.ScriptStore()
	if err := scripts.Put(ctx, codemode.Script{Name: "report", Description: "d", Code: code, Owner: "acme/alice", Saved: time.Now()}); err != nil {
		t.Fatal(err)
	}
	streams := c.CallStreams()
	info := frontend.StreamInfo{Session: "mcp-1", Principal: "acme/alice"}
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"` + event + `"}}`)
	if err := streams.Append(ctx, "cs_1", info, []frontend.StreamEvent{{Seq: 0}, {Seq: 1, Data: msg}}, false, time.Minute); err != nil {
		t.Fatal(err)
	}
	// Over a chunk, with the secret in both chunks, read from inside the second.
	big := bytes.Repeat([]byte("x"), (1<<20)+100)
	copy(big[10:], result)
	copy(big[(1<<20)+50:], result)
	results := c.ResultStore(codemode.ResultLimits{}, nil)
	if err := results.Put(ctx, codemode.HeldResult{ID: "r1", Principal: "acme/alice", Tool: "files:read", Bytes: int64(len(big))}, bytes.NewReader(big)); err != nil {
		t.Fatal(err)
	}
	usage := c.Usage(nil)
	if err := usage.Record(ctx, "acme/alice", []string{word}, []string{"crm:find_deal"}); err != nil {
		t.Fatal(err)
	}

	released := c.ReleasedRuns(0, nil)
	journal := []byte(`{"j":{"calls":[{"result":"` + answer + `"}]}}`)
	if err := released.Put(ctx, "run-1", "acme/alice", journal, time.Minute); err != nil {
		t.Fatal(err)
	}

	if found := holding(srv.Contents(t), value, "alice-script-body", event, result, word, answer); len(found) > 0 {
		t.Fatalf("Redis holds users' data in clear under %v", found)
	}
	disk := srv.Disk(t) // the append-only file: what a backup holds
	if !bytes.Contains(disk, []byte("acme%2Falice")) {
		t.Fatalf("the append-only file (%d bytes) does not have the writes", len(disk))
	}
	for _, secret := range []string{value, "alice-script-body", event, result, word, answer} {
		if bytes.Contains(disk, []byte(secret)) {
			t.Fatalf("Redis wrote %q to disk in clear", secret)
		}
	}

	// Everything reads back.
	if v, ok, err := store.Get(ctx, alice, "diary"); err != nil || !ok || !strings.Contains(string(v), value) {
		t.Fatalf("store: %s %v %v", v, ok, err)
	}
	if vis, err := scripts.Visible(ctx, "acme/alice"); err != nil || len(vis) != 1 || vis[0].Code != code {
		t.Fatalf("scripts: %+v %v", vis, err)
	}
	if _, evs, _, _, ok, err := streams.Read(ctx, "cs_1", 0); err != nil || !ok || len(evs) != 2 || len(evs[0].Data) != 0 || !bytes.Equal(evs[1].Data, msg) {
		t.Fatalf("stream: %+v %v %v", evs, ok, err)
	}
	rc, err := results.Open(ctx, "acme/alice", "r1", (1<<20)+50)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(tail, big[(1<<20)+50:]) {
		t.Fatalf("the result from inside its second chunk: %d bytes, %v", len(tail), err)
	}
	if ev, err := usage.Evidence(ctx, []string{word}); err != nil || ev[word]["crm:find_deal"] != 1 {
		t.Fatalf("usage: %v %v", ev, err)
	}
	if run, err := released.Take(ctx, "run-1", "acme/alice"); err != nil || !bytes.Equal(run, journal) {
		t.Fatalf("released run: %s %v", run, err)
	}

	// Alice's sealed value given to bob's key does not decrypt there.
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()
	prefix := "t1:" // the first client's prefix (clients)
	sealed := raw.HGet(ctx, prefix+"store:{acme%2Falice}:values", "\x00diary").Val()
	bob := codemode.StoreScope{Principal: "acme/bob"}
	if err := store.Set(ctx, bob, "diary", json.RawMessage(`1`), 0); err != nil {
		t.Fatal(err)
	}
	raw.HSet(ctx, prefix+"store:{acme%2Fbob}:values", "\x00diary", sealed)
	if v, ok, err := store.Get(ctx, bob, "diary"); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Fatalf("bob read alice's moved value: %s %v %v", v, ok, err)
	}

	other, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: prefix, EncryptionKey: newKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if v, _, err := other.Store(codemode.StoreLimits{}, nil).Get(ctx, alice, "diary"); err == nil {
		t.Fatalf("another key read alice's value: %s", v)
	}
	if _, err := other.ScriptStore().Visible(ctx, "acme/alice"); err == nil {
		t.Fatal("another key read alice's scripts")
	}
}

// TestLegacyDataInClear: store values and saved scripts that a version
// before sealing wrote in clear are read as they are, counted at their
// size; SealLegacy seals them in place (and they still read, and count
// the same), drops what search learned under words in clear, and finds
// nothing to do the second time.
func TestLegacyDataInClear(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: "old:", EncryptionKey: newKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()

	// What the earlier version wrote, key by key.
	const value, key = `{"note":"legacy-secret-4410"}`, "notes"
	base := "old:store:{acme%2Falice}:"
	raw.HSet(ctx, base+"values", "\x00"+key, value)
	raw.HSet(ctx, base+"counts", "bytes", len(key)+len(value), "keys", 1)
	raw.ZAdd(ctx, base+"index:", redis.Z{Member: key})
	legacyScript, _ := json.Marshal(codemode.Script{Name: "old_report", Description: "d", Code: "return 'legacy-script-3307'", Owner: "acme/alice"})
	raw.HSet(ctx, "old:scripts:{acme%2Falice}:code", "old_report", legacyScript)
	raw.HSet(ctx, "old:scripts:{acme%2Falice}:size", "old_report", 40)
	raw.SAdd(ctx, "old:scripts:owners", "acme/alice")
	raw.ZAdd(ctx, "old:usage:{usage}:w:legacyword", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "crm%3Afind_deal"})

	store := c.Store(codemode.StoreLimits{}, nil)
	alice := codemode.StoreScope{Principal: "acme/alice"}
	check := func(when string) {
		t.Helper()
		if v, ok, err := store.Get(ctx, alice, key); err != nil || !ok || string(v) != value {
			t.Fatalf("%s: the value: %s %v %v", when, v, ok, err)
		}
		if vis, err := c.ScriptStore().Visible(ctx, "acme/alice"); err != nil || len(vis) != 1 || vis[0].Code != "return 'legacy-script-3307'" {
			t.Fatalf("%s: the script: %+v %v", when, vis, err)
		}
		if b := raw.HGet(ctx, base+"counts", "bytes").Val(); b != fmt.Sprint(len(key)+len(value)) {
			t.Fatalf("%s: counted %s bytes", when, b)
		}
	}
	check("in clear")
	sealed, dropped, err := c.SealLegacy(ctx)
	if err != nil || sealed != 2 || dropped != 1 {
		t.Fatalf("SealLegacy: sealed %d, dropped %d, %v", sealed, dropped, err)
	}
	check("sealed")
	if found := holding(srv.Contents(t), "legacy-secret", "legacy-script", "legacyword"); len(found) > 0 {
		t.Fatalf("still in clear after SealLegacy: %v", found)
	}
	if sealed, dropped, err := c.SealLegacy(ctx); err != nil || sealed != 0 || dropped != 0 {
		t.Fatalf("SealLegacy again: sealed %d, dropped %d, %v", sealed, dropped, err)
	}
	// The sealed value is counted at its own size: deleting it frees all.
	if ok, err := store.Delete(ctx, alice, key); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if b := raw.HGet(ctx, base+"counts", "bytes").Val(); b != "0" {
		t.Fatalf("after the delete, %s bytes are counted", b)
	}
}
