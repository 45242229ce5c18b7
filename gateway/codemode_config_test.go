package gateway

import (
	"strings"
	"testing"
	"time"
)

func TestCodeModeBlock(t *testing.T) {
	cfg, err := ParseConfig("/etc/sandbox/gw.json", []byte(`{"mcpServers": {}, "codeMode": {
  "k": 7, "indexDir": "idx", "workers": 3,
  "embedder": {"provider": "openai", "url": "http://127.0.0.1:9/v1", "model": "m", "apiKeyEnv": "KEY", "timeout": "5s"},
  "limits": {"timeout": "10s", "memoryMB": 64, "toolCalls": 9, "outputKB": 2, "resultKB": 3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.CodeMode
	want := CodeModeConfig{K: 7, IndexDir: "/etc/sandbox/idx", Workers: 3,
		Embedder: EmbedderConfig{Provider: "openai", URL: "http://127.0.0.1:9/v1", Model: "m", APIKeyEnv: "KEY", Timeout: 5 * time.Second},
		Limits:   CodeModeLimits{Timeout: 10 * time.Second, MemoryBytes: 64 << 20, ToolCalls: 9, OutputBytes: 2 << 10, ResultBytes: 3 << 10}}
	if c != want {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.Config().CodeMode != want {
		t.Error("the gateway's own copy of the config dropped the codeMode block")
	}
}

func TestCodeModeBlockErrorsArePositioned(t *testing.T) {
	cases := map[string]string{
		`{"mcpServers": {}, "codeMode": {"kk": 1}}`:                                        `gw.json:1:33: unknown key "kk" in "codeMode"`,
		`{"mcpServers": {}, "codeMode": {"k": 99}}`:                                        `"k" is at most 50`,
		`{"mcpServers": {}, "codeMode": {"embedder": {"provider": "word2vec"}}}`:           `"provider" must be "builtin", "ollama" or "openai"`,
		`{"mcpServers": {}, "codeMode": {"embedder": {"provider": "ollama"}}}`:             `needs a "model"`,
		`{"mcpServers": {}, "codeMode": {"limits": {"timeout": 30}}}`:                      `timeout`,
		`{"mcpServers": {}, "codeMode": {"limits": {"memoryMB": 4}}}`:                      `at least 16`,
		`{"mcpServers": {}, "codeMode": {"limits": {"cpu": 1}}}`:                           `unknown key "cpu" in "limits"`,
		`{"mcpServers": {}, "codeMode": []}`:                                               `"codeMode" must be an object`,
		`{"mcpServers": {}, "codeMode": {"embedder": {"provider": "openai", "key": "s"}}}`: `unknown key "key" in "embedder"`,
	}
	for in, want := range cases {
		_, err := ParseConfig("gw.json", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
}
