package vectorindex

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/philippgille/chromem-go"
)

// Embedder selects what turns text into vectors. The zero value is the
// built-in embedder: offline, pure Go, no model weights.
//
// The real embedding services are optional and go through chromem-go's own
// providers:
//
//	{Provider: "ollama", Model: "nomic-embed-text"}                      // URL defaults to http://localhost:11434/api
//	{Provider: "openai", Model: "text-embedding-3-small"}                // key from $OPENAI_API_KEY
//	{Provider: "openai", URL: "http://localhost:8080/v1", Model: "bge-m3", APIKeyEnv: "LOCALAI_KEY"}
//
// Whatever the embedder, lexical (BM25) scoring with WordNet expansion runs
// beside it; the embedder only supplies the vector half of the score.
type Embedder struct {
	// Provider is "builtin" (or empty), "ollama" or "openai" (any
	// OpenAI-compatible /embeddings endpoint).
	Provider string `json:"provider,omitempty"`
	// URL is the API base: for ollama ".../api", for openai ".../v1".
	URL string `json:"url,omitempty"`
	// Model is the embedding model; required for ollama and openai.
	Model string `json:"model,omitempty"`
	// APIKeyEnv names the environment variable holding the API key (the key
	// itself never sits in a config file). For openai it defaults to
	// OPENAI_API_KEY when URL is empty, i.e. for api.openai.com.
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Timeout bounds one embedding request; default 30s.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// embedder is what the index needs from an embedding backend.
type embedder interface {
	// embedTool and embedQuery return unit-length vectors.
	embedTool(ctx context.Context, t Tool) ([]float32, error)
	embedQuery(ctx context.Context, q string) ([]float32, error)
	// id names the vector space: vectors with different ids never mix, so
	// changing the embedder (or its model) re-embeds instead of comparing
	// apples with pears. The store records it beside the vectors.
	id() string
	// remote embedders are called concurrently when a catalog is synced.
	remote() bool
}

func (e Embedder) build() (embedder, error) {
	switch strings.ToLower(e.Provider) {
	case "", "builtin":
		if e.URL != "" || e.Model != "" {
			return nil, errors.New("embedder: the builtin embedder takes no URL or model; set provider to \"ollama\" or \"openai\" to use a service")
		}
		return newBuiltinEmbedder(), nil
	case "ollama":
		if e.Model == "" {
			return nil, errors.New("embedder: ollama needs a model, e.g. \"nomic-embed-text\" (run `ollama pull nomic-embed-text` first)")
		}
		base := e.URL
		if base == "" {
			base = "http://localhost:11434/api"
		}
		if err := checkURL(base); err != nil {
			return nil, err
		}
		fn := chromem.NewEmbeddingFuncOllama(e.Model, strings.TrimRight(base, "/"))
		return &remoteEmbedder{name: "ollama", base: base, model: e.Model, fn: fn, timeout: e.timeout(),
			hint: fmt.Sprintf("is Ollama running at %s with the model pulled (`ollama pull %s`)?", base, e.Model)}, nil
	case "openai":
		if e.Model == "" {
			return nil, errors.New("embedder: openai needs a model, e.g. \"text-embedding-3-small\"")
		}
		base := e.URL
		keyEnv := e.APIKeyEnv
		if base == "" {
			base = chromem.BaseURLOpenAI
			if keyEnv == "" {
				keyEnv = "OPENAI_API_KEY"
			}
		}
		if err := checkURL(base); err != nil {
			return nil, err
		}
		key := ""
		if keyEnv != "" {
			key = os.Getenv(keyEnv)
			if key == "" {
				return nil, fmt.Errorf("embedder: environment variable %s (the API key for %s) is empty or unset", keyEnv, base)
			}
		}
		fn := chromem.NewEmbeddingFuncOpenAICompat(strings.TrimRight(base, "/"), key, e.Model, nil)
		return &remoteEmbedder{name: "openai", base: base, model: e.Model, fn: fn, timeout: e.timeout(),
			hint: fmt.Sprintf("check that %s serves /embeddings for model %q and that the API key is valid", base, e.Model)}, nil
	default:
		return nil, fmt.Errorf("embedder: unknown provider %q: use \"builtin\", \"ollama\" or \"openai\"", e.Provider)
	}
}

func (e Embedder) timeout() time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return 30 * time.Second
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("embedder: URL %q is not an http(s) URL", s)
	}
	return nil
}

// remoteEmbedder wraps one of chromem-go's providers with a timeout, checks
// on what comes back and errors that say what to do.
type remoteEmbedder struct {
	name, base, model, hint string
	fn                      chromem.EmbeddingFunc
	timeout                 time.Duration
}

func (r *remoteEmbedder) id() string {
	return "v1|" + r.name + "|" + strings.TrimRight(r.base, "/") + "|" + r.model
}
func (r *remoteEmbedder) remote() bool { return true }

func (r *remoteEmbedder) embedTool(ctx context.Context, t Tool) ([]float32, error) {
	return r.embed(ctx, t.docText())
}

func (r *remoteEmbedder) embedQuery(ctx context.Context, q string) ([]float32, error) {
	return r.embed(ctx, q)
}

func (r *remoteEmbedder) embed(ctx context.Context, text string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := r.fn(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("embedding with %s model %q: %w (%s)", r.name, r.model, err, r.hint)
	}
	out := make([]float32, len(v)) // never keep the provider's slice
	copy(out, v)
	var s float64
	for _, x := range out {
		s += float64(x) * float64(x)
	}
	// chromem normalises what the service sends, so a zero vector arrives
	// here as NaN.
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("embedding with %s model %q: the service returned a zero or non-finite vector for %q", r.name, r.model, truncate(text, 60))
	}
	l2normalize(out)
	return out, nil
}
