package vectorindex

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeVector is what the stand-in embedding services return: a bag of
// hashed words, deliberately not of unit length, so that the index has to
// normalise it.
func fakeVector(text string, dims int) []float64 {
	v := make([]float64, dims)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,:;!?'\"()")
		if len(w) < 3 {
			continue
		}
		v[fnv1a(w)%uint64(dims)] += 3
	}
	v[0] += 0.5 // never all zero
	return v
}

// embeddingService is a local stand-in for Ollama (POST /api/embeddings
// {model, prompt} -> {embedding}) and the OpenAI API (POST /v1/embeddings
// {model, input} -> {data: [{embedding}]}, Bearer auth).
type embeddingService struct {
	*httptest.Server
	calls    atomic.Int64
	dims     atomic.Int64
	fail     atomic.Bool
	zero     atomic.Bool
	apiKey   string
	lastAuth atomic.Value
}

func newEmbeddingService(t *testing.T, apiKey string) *embeddingService {
	s := &embeddingService{apiKey: apiKey}
	s.dims.Store(48)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model, Prompt string }
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-embed" || req.Prompt == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.respond(w, func(v []float64) any { return map[string]any{"embedding": v} }, req.Prompt)
	})
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		s.lastAuth.Store(r.Header.Get("Authorization"))
		if s.apiKey != "" && r.Header.Get("Authorization") != "Bearer "+s.apiKey {
			http.Error(w, `{"error":"invalid api key"}`, http.StatusUnauthorized)
			return
		}
		var req struct{ Model, Input string }
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-embed" || req.Input == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.respond(w, func(v []float64) any { return map[string]any{"data": []any{map[string]any{"embedding": v}}} }, req.Input)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *embeddingService) respond(w http.ResponseWriter, wrap func([]float64) any, text string) {
	s.calls.Add(1)
	if s.fail.Load() {
		http.Error(w, "model not loaded", http.StatusInternalServerError)
		return
	}
	v := fakeVector(text, int(s.dims.Load()))
	if s.zero.Load() {
		v = make([]float64, len(v))
	}
	json.NewEncoder(w).Encode(wrap(v))
}

func TestRemoteEmbedders(t *testing.T) {
	ctx := context.Background()
	t.Setenv("VI_TEST_EMBED_KEY", "sekret")
	for _, provider := range []string{"ollama", "openai"} {
		t.Run(provider, func(t *testing.T) {
			svc := newEmbeddingService(t, "sekret")
			cfg := Embedder{Provider: provider, Model: "fake-embed", URL: svc.URL + "/api"}
			if provider == "openai" {
				cfg.URL, cfg.APIKeyEnv = svc.URL+"/v1", "VI_TEST_EMBED_KEY"
			}
			dir := t.TempDir()
			ix := mustIndex(t, Options{Dir: dir, Embedder: cfg}, smallCatalog())
			if n := svc.calls.Load(); n != int64(len(smallCatalog())) {
				t.Errorf("sync made %d embedding calls, want one per tool (%d)", n, len(smallCatalog()))
			}
			if got := top1(t, ix, "take a screenshot of the page"); got != "playwright:browser_take_screenshot" {
				t.Errorf("top hit %s", got)
			}
			if provider == "openai" {
				if got := svc.lastAuth.Load(); got != "Bearer sekret" {
					t.Errorf("Authorization header %q", got)
				}
			}
			// A restart with the same service embeds nothing but queries.
			before := svc.calls.Load()
			ix2 := mustIndex(t, Options{Dir: dir, Embedder: cfg}, smallCatalog())
			if n := svc.calls.Load() - before; n != 0 {
				t.Errorf("restart re-embedded %d tools", n)
			}
			if ix2.Len() != len(smallCatalog()) {
				t.Errorf("restart: %d tools", ix2.Len())
			}
			// Switching to the builtin embedder in the same directory does not
			// mix vector spaces.
			ix3 := mustIndex(t, Options{Dir: dir}, smallCatalog())
			if got := top1(t, ix3, "take a screenshot of the page"); got != "playwright:browser_take_screenshot" {
				t.Errorf("after switching embedders: top hit %s", got)
			}

			// Failures are errors that say where to look, and leave the index
			// as it was.
			svc.fail.Store(true)
			_, err := ix.Sync(ctx, append(smallCatalog(), Tool{Server: "x", Name: "new_tool", Description: "brand new"}))
			if err == nil || !strings.Contains(err.Error(), "500") {
				t.Errorf("service failing: %v", err)
			}
			if ix.Len() != len(smallCatalog()) {
				t.Errorf("a failed Sync changed the index to %d tools", ix.Len())
			}
			if _, err := ix.Search(ctx, "screenshot", 3); err == nil {
				t.Error("search with a failing service: no error")
			}
			svc.fail.Store(false)
			svc.zero.Store(true)
			if _, err := ix.Search(ctx, "screenshot", 3); err == nil || !strings.Contains(err.Error(), "zero") {
				t.Errorf("zero vector: %v", err)
			}
			svc.zero.Store(false)
			svc.dims.Store(16)
			_, err = ix.Sync(ctx, append(smallCatalog(), Tool{Server: "x", Name: "other_tool", Description: "another"}))
			if err == nil || !strings.Contains(err.Error(), "dimension") {
				t.Errorf("dimension change: %v", err)
			}
		})
	}
}

func TestRemoteEmbedderTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ix, err := New(Options{Embedder: Embedder{Provider: "ollama", Model: "m", URL: srv.URL + "/api", Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = ix.Sync(context.Background(), smallCatalog())
	if err == nil || !strings.Contains(err.Error(), "Ollama running") {
		t.Errorf("hanging service: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a hanging service held Sync for %v", d)
	}
}

func TestOpenAIKeyDefaultsForTheOfficialAPI(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	_, err := New(Options{Embedder: Embedder{Provider: "openai", Model: "text-embedding-3-small"}})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key for api.openai.com: %v", err)
	}
	// A local OpenAI-compatible server without a key is fine.
	svc := newEmbeddingService(t, "")
	ix := mustIndex(t, Options{Embedder: Embedder{Provider: "openai", URL: svc.URL + "/v1", Model: "fake-embed"}}, smallCatalog())
	if got := top1(t, ix, "post a message to the slack channel"); got != "slack:slack_post_message" {
		t.Errorf("top hit %s", got)
	}
	if got := strings.TrimSpace(fmt.Sprint(svc.lastAuth.Load())); got != "Bearer" {
		t.Errorf("Authorization %q, want an empty bearer token", got)
	}
}
