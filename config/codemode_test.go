package config

import (
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// TestCodeModeBlock: the "codeMode" block becomes the engine's and the
// runtime's own options, with nothing in between to copy.
func TestCodeModeBlock(t *testing.T) {
	file, err := Parse("/etc/sandbox/gw.json", []byte(`{"mcpServers": {}, "codeMode": {
  "k": 7, "indexDir": "idx", "workers": 3, "maxQueue": 9, "maxExpectedWait": "1500ms", "perSessionWorkers": 2,
  "embedder": {"provider": "openai", "url": "http://127.0.0.1:9/v1", "model": "m", "apiKeyEnv": "KEY", "timeout": "5s"},
  "limits": {"timeout": "10s", "memoryMB": 64, "toolCalls": 9, "outputKB": 2, "resultKB": 3},
  "results": {"perPrincipalMB": 300, "totalMB": 900, "ttl": "1h"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := file.CodeMode
	want := codemode.Options{K: 7, IndexDir: "/etc/sandbox/idx",
		Embedder:     vectorindex.Embedder{Provider: "openai", URL: "http://127.0.0.1:9/v1", Model: "m", APIKeyEnv: "KEY", Timeout: 5 * time.Second},
		Limits:       runtime.Limits{Timeout: 10 * time.Second, MemoryBytes: 64 << 20, ToolCalls: 9, OutputBytes: 2 << 10, ResultBytes: 3 << 10},
		ResultLimits: codemode.ResultLimits{PerPrincipalBytes: 300 << 20, TotalBytes: 900 << 20, TTL: time.Hour}}
	if c.Disabled || c.Engine != want {
		t.Fatalf("got  %+v\nwant %+v", c.Engine, want)
	}
	if c.Runtime.Workers != 3 || c.Runtime.MaxQueue != 9 || c.Runtime.PerCallerWorkers != 2 || c.Runtime.MaxExpectedWait != 1500*time.Millisecond ||
		c.Runtime.Isolation != 0 || c.Runtime.WorkerCommand != nil || c.Runtime.Defaults != (runtime.Limits{}) {
		t.Fatalf("runtime options = %+v, want only Workers: 3, MaxQueue: 9, MaxExpectedWait: 1.5s, PerCallerWorkers: 2", c.Runtime)
	}

	// Absent: the runtime's defaults (the wait bound, a queue of 64 per worker, no cap); a
	// queue of 0 is no waiting at all, which the runtime spells -1.
	file, err = Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"k": 1}}`))
	if err != nil || file.CodeMode.Runtime.MaxQueue != 0 || file.CodeMode.Runtime.PerCallerWorkers != 0 || file.CodeMode.Runtime.MaxExpectedWait != 0 {
		t.Fatalf("absent: %v %+v", err, file.CodeMode.Runtime)
	}
	file, err = Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"maxQueue": 0}}`))
	if err != nil || file.CodeMode.Runtime.MaxQueue != -1 {
		t.Fatalf("maxQueue 0: %v %+v", err, file.CodeMode.Runtime)
	}

	file, err = Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"expose": "all"}}`))
	if err != nil || file.CodeMode.Expose != ExposeAll {
		t.Fatalf("expose: %v %+v", err, file.CodeMode)
	}
	file, err = Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"disabled": true}}`))
	if err != nil || !file.CodeMode.Disabled {
		t.Fatalf("disabled: %v %+v", err, file)
	}
}

func TestCodeModeBlockErrorsArePositioned(t *testing.T) {
	cases := map[string]string{
		`{"mcpServers": {}, "codeMode": {"kk": 1}}`:                                            `gw.json:1:33: unknown key "kk" in "codeMode"`,
		`{"mcpServers": {}, "codeMode": {"k": 99}}`:                                            `"k" is at most 50`,
		`{"mcpServers": {}, "codeMode": {"expose": "tools"}}`:                                  `"expose" is "code" or "all", got "tools"`,
		`{"mcpServers": {}, "codeMode": {"embedder": {"provider": "word2vec"}}}`:               `"provider" must be "builtin", "ollama" or "openai"`,
		`{"mcpServers": {}, "codeMode": {"embedder": {"provider": "ollama"}}}`:                 `needs a "model"`,
		`{"mcpServers": {}, "codeMode": {"limits": {"timeout": 30}}}`:                          `timeout`,
		`{"mcpServers": {}, "codeMode": {"limits": {"memoryMB": 4}}}`:                          `at least 16`,
		`{"mcpServers": {}, "codeMode": {"limits": {"cpu": 1}}}`:                               `unknown key "cpu" in "limits"; known keys: timeout, memoryMB, toolCalls, outputKB, resultKB`,
		`{"mcpServers": {}, "codeMode": []}`:                                                   `"codeMode" must be an object`,
		`{"mcpServers": {}, "codeMode": {"maxQueue": -1}}`:                                     `gw.json:1:45: "maxQueue" must be a whole number, 0 or more, got -1`,
		`{"mcpServers": {}, "codeMode": {"maxQueue": "8"}}`:                                    `"maxQueue" must be a whole number, 0 or more, found a string`,
		`{"mcpServers": {}, "codeMode": {"maxExpectedWait": "0s"}}`:                            `"maxExpectedWait" must be longer than zero`,
		`{"mcpServers": {}, "codeMode": {"maxExpectedWait": 3}}`:                               `"maxExpectedWait" must be a duration string`,
		`{"mcpServers": {}, "codeMode": {"perSessionWorkers": 0}}`:                             `gw.json:1:54: "perSessionWorkers" must be a positive whole number`,
		`{"mcpServers": {}, "codeMode": {"perSessionWorkers": 3, "workers": 2}}`:               `gw.json:1:54: "perSessionWorkers" (3) is more than "workers" (2)`,
		`{"mcpServers": {}, "codeMode": {"embedder": {"provider": "openai", "key": "s"}}}`:     `unknown key "key" in "embedder"`,
		`{"mcpServers": {}, "codeMode": {"results": {"perPrincipalMB": 900, "totalMB": 300}}}`: `"perPrincipalMB" (900) is more than "totalMB" (300)`,
		`{"mcpServers": {}, "codeMode": {"results": {"ttl": 5}}}`:                              `ttl`,
		`{"mcpServers": {}, "codeMode": {"results": {"mb": 5}}}`:                               `unknown key "mb" in "results"; known keys: perPrincipalMB, totalMB, ttl`,
	}
	for in, want := range cases {
		_, err := Parse("gw.json", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
}

// TestCodeModeLimitsAreTheTable: "limits" and "maxLimits" take one key per
// limit an execute_code request may set (codemode.RequestLimits), each in
// its unit, into that limit's field.
func TestCodeModeLimitsAreTheTable(t *testing.T) {
	for _, r := range codemode.RequestLimits {
		value, want := "40", int64(40)*r.Unit
		if r.Kind == codemode.LimitDuration {
			value, want = `"40s"`, int64(40*time.Second)
		}
		for _, block := range []string{"limits", "maxLimits"} {
			file, err := Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"`+block+`": {"`+r.ConfigKey+`": `+value+`}}}`))
			if err != nil {
				t.Fatalf("%s.%s: %v", block, r.ConfigKey, err)
			}
			got := file.CodeMode.Engine.Limits
			if block == "maxLimits" {
				got = file.CodeMode.Engine.MaxLimits
			}
			if r.Get(got) != want {
				t.Errorf("%s.%s: %s read as %d, want %d", block, r.ConfigKey, value, r.Get(got), want)
			}
		}
		if r.Kind != codemode.LimitDuration {
			_, err := Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"limits": {"`+r.ConfigKey+`": 0}}}`))
			if err == nil || !strings.Contains(err.Error(), `"`+r.ConfigKey+`" must be a positive whole number`) {
				t.Errorf("%s: 0 gave %v", r.ConfigKey, err)
			}
		}
	}
}
