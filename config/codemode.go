package config

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// CodeMode is the optional "codeMode" block: settings of the code-mode tools
// (search_tools, execute_code) that `sandbox serve` adds beside the
// gateway's own, kept in the one file users already have, with errors at
// their position.
//
//	"codeMode": {
//	  "k": 5, "indexDir": ".sandbox-index", "dataDir": ".sandbox-data", "workers": 4, "maxQueue": 16, "perSessionWorkers": 2,
//	  "embedder": {"provider": "ollama", "model": "nomic-embed-text", "url": "http://localhost:11434/api"},
//	  "limits": {"timeout": "30s", "memoryMB": 256, "toolCalls": 1000, "outputKB": 1024, "resultKB": 1024},
//	  "maxLimits": {"timeout": "2m", "memoryMB": 512},
//	  "results": {"perPrincipalMB": 512, "totalMB": 2048, "ttl": "30m"}
//	}
type CodeMode struct {
	// Disabled leaves the code-mode tools out ("disabled": true).
	Disabled bool
	// Engine is k, indexDir (relative to the config file's folder), embedder,
	// limits (execute_code's defaults; zero fields: the runtime's) and
	// maxLimits (the most a request may ask for; zero fields: the defaults).
	// Its Logger is left to the caller.
	Engine codemode.Options
	// Expose is which tools `sandbox serve` lists: "code" (the code-mode and
	// hub tools only; the default) or "all" (every upstream tool too).
	Expose string
	// Runtime is workers: how many snippets run at once (0: CPUs);
	// maxExpectedWait: the longest an execute_code run may expect to wait
	// for a worker (absent: runtime.DefaultMaxExpectedWait, 3s), past which it
	// gets BUSY with a retry hint from the same estimate;
	// maxQueue: how many runs may wait however short (absent: 64 per
	// worker; 0: none waits, MaxQueue -1), past which a run gets BUSY;
	// perSessionWorkers: the most workers one session holds while others
	// wait (absent: no cap).
	Runtime runtime.Options
}

// The values of "codeMode.expose" (and `sandbox serve --expose`).
const (
	ExposeCode = "code"
	ExposeAll  = "all"
)

var codeModeKeys = []string{"disabled", "expose", "k", "indexDir", "dataDir", "workers", "maxExpectedWait", "maxQueue", "perSessionWorkers", "embedder", "limits", "maxLimits", "results"}

func (p *parser) parseCodeMode(n *jsonNode, c *CodeMode) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, "\"codeMode\" must be an object such as {\"k\": 5, \"limits\": {\"timeout\": \"30s\"}}, found %s", n.kind)
	}
	var err error
	var perSession *jsonNode
	for _, k := range n.keys {
		v := k.value
		switch k.name {
		case "disabled":
			c.Disabled, err = p.boolean(v, "disabled")
		case "expose":
			c.Expose, err = p.expandedString(v, "expose")
			if err == nil && c.Expose != ExposeCode && c.Expose != ExposeAll {
				err = p.errAt(v.offset, "\"expose\" is %q or %q, got %q", ExposeCode, ExposeAll, c.Expose)
			}
		case "k":
			c.Engine.K, err = p.positiveInt(v, "k")
			if err == nil && c.Engine.K > 50 {
				err = p.errAt(v.offset, "\"k\" is at most 50")
			}
		case "indexDir":
			c.Engine.IndexDir, err = p.expandedString(v, "indexDir")
			if err == nil && c.Engine.IndexDir != "" && !filepath.IsAbs(c.Engine.IndexDir) && p.baseDir != "" {
				c.Engine.IndexDir = filepath.Join(p.baseDir, c.Engine.IndexDir)
			}
		case "dataDir":
			c.Engine.DataDir, err = p.expandedString(v, "dataDir")
			if err == nil && c.Engine.DataDir != "" && !filepath.IsAbs(c.Engine.DataDir) && p.baseDir != "" {
				c.Engine.DataDir = filepath.Join(p.baseDir, c.Engine.DataDir)
			}
		case "workers":
			c.Runtime.Workers, err = p.positiveInt(v, "workers")
		case "maxExpectedWait":
			// Positive: "maxQueue": 0 is how no run waits.
			c.Runtime.MaxExpectedWait, err = p.duration(v, "maxExpectedWait")
		case "maxQueue":
			c.Runtime.MaxQueue, err = p.nonNegativeInt(v, "maxQueue")
			if err == nil && c.Runtime.MaxQueue == 0 {
				c.Runtime.MaxQueue = -1 // what the user means by 0: no run waits
			}
		case "perSessionWorkers":
			c.Runtime.PerCallerWorkers, err = p.positiveInt(v, "perSessionWorkers")
			perSession = v
		case "embedder":
			err = p.parseEmbedder(v, &c.Engine.Embedder)
		case "limits":
			err = p.parseCodeModeLimits(v, "limits", &c.Engine.Limits)
		case "maxLimits":
			err = p.parseCodeModeLimits(v, "maxLimits", &c.Engine.MaxLimits)
		case "results":
			err = p.parseResultLimits(v, &c.Engine.ResultLimits)
		default:
			return p.errAt(k.offset, "unknown key %q in \"codeMode\"; known keys: %s", k.name, strings.Join(codeModeKeys, ", "))
		}
		if err != nil {
			return err
		}
	}
	if w := c.Runtime.Workers; perSession != nil && w > 0 && c.Runtime.PerCallerWorkers > w {
		return p.errAt(perSession.offset, "\"perSessionWorkers\" (%d) is more than \"workers\" (%d): a session can never hold more workers than there are", c.Runtime.PerCallerWorkers, w)
	}
	return nil
}

func (p *parser) parseEmbedder(n *jsonNode, e *vectorindex.Embedder) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, "\"embedder\" must be an object such as {\"provider\": \"ollama\", \"model\": \"nomic-embed-text\"}, found %s", n.kind)
	}
	var err error
	for _, k := range n.keys {
		v := k.value
		switch k.name {
		case "provider":
			e.Provider, err = p.str(v, "provider")
			if err == nil && e.Provider != "builtin" && e.Provider != "ollama" && e.Provider != "openai" {
				err = p.errAt(v.offset, "\"provider\" must be \"builtin\", \"ollama\" or \"openai\" (any OpenAI-compatible /embeddings API), got %q", e.Provider)
			}
		case "url":
			e.URL, err = p.expandedString(v, "url")
		case "model":
			e.Model, err = p.str(v, "model")
		case "apiKeyEnv":
			e.APIKeyEnv, err = p.str(v, "apiKeyEnv")
		case "timeout":
			e.Timeout, err = p.duration(v, "timeout")
		default:
			return p.errAt(k.offset, "unknown key %q in \"embedder\"; known keys: provider, url, model, apiKeyEnv, timeout", k.name)
		}
		if err != nil {
			return err
		}
	}
	if (e.Provider == "ollama" || e.Provider == "openai") && e.Model == "" {
		return p.errAt(n.offset, "the %s embedder needs a \"model\", e.g. \"nomic-embed-text\" or \"text-embedding-3-small\"", e.Provider)
	}
	return nil
}

// parseCodeModeLimits reads "limits" or "maxLimits": one key per limit an
// execute_code request may set (codemode.RequestLimits), a duration as
// "30s" and the others as whole numbers in the unit of their name.
func (p *parser) parseCodeModeLimits(n *jsonNode, block string, l *runtime.Limits) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, "%q must be an object such as {\"timeout\": \"30s\", \"memoryMB\": 256}, found %s", block, n.kind)
	}
	known := make([]string, len(codemode.RequestLimits))
	for i, r := range codemode.RequestLimits {
		known[i] = r.ConfigKey
	}
	for _, k := range n.keys {
		i := slices.Index(known, k.name)
		if i < 0 {
			return p.errAt(k.offset, "unknown key %q in %q; known keys: %s", k.name, block, strings.Join(known, ", "))
		}
		r := codemode.RequestLimits[i]
		if r.Kind == codemode.LimitDuration {
			d, err := p.duration(k.value, r.ConfigKey)
			if err != nil {
				return err
			}
			r.Set(l, int64(d))
			continue
		}
		v, err := p.positiveInt(k.value, r.ConfigKey)
		if err != nil {
			return err
		}
		if int64(v) < r.Min {
			return p.errAt(k.value.offset, "%q must be at least %d", r.ConfigKey, r.Min)
		}
		r.Set(l, int64(v)*r.Unit)
	}
	return nil
}

// parseResultLimits reads "results": what the big results of runs
// (sandbox.results) may take, per principal and in all, and how long one
// is kept after its last use.
func (p *parser) parseResultLimits(n *jsonNode, l *codemode.ResultLimits) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, "\"results\" must be an object such as {\"perPrincipalMB\": 512, \"totalMB\": 2048, \"ttl\": \"30m\"}, found %s", n.kind)
	}
	var err error
	var v int
	for _, k := range n.keys {
		switch k.name {
		case "perPrincipalMB":
			v, err = p.positiveInt(k.value, "perPrincipalMB")
			l.PerPrincipalBytes = int64(v) << 20
		case "totalMB":
			v, err = p.positiveInt(k.value, "totalMB")
			l.TotalBytes = int64(v) << 20
		case "ttl":
			l.TTL, err = p.duration(k.value, "ttl")
		default:
			return p.errAt(k.offset, "unknown key %q in \"results\"; known keys: perPrincipalMB, totalMB, ttl", k.name)
		}
		if err != nil {
			return err
		}
	}
	if l.PerPrincipalBytes > 0 && l.TotalBytes > 0 && l.PerPrincipalBytes > l.TotalBytes {
		return p.errAt(n.offset, "\"perPrincipalMB\" (%d) is more than \"totalMB\" (%d): one caller can never hold more than all of them", l.PerPrincipalBytes>>20, l.TotalBytes>>20)
	}
	return nil
}
