package config

import (
	"strings"
	"testing"
)

// TestParseRedis: the "redis" block of "gateway" is read key by key into
// config's own settings (config opens no backend), with ${VAR} in url and
// encryptionKey; what is missing or unknown is an error at its position.
func TestParseRedis(t *testing.T) {
	t.Setenv("SANDBOX_TEST_REDIS_KEY", "a2V5")
	f, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"redis":
		{"url": "redis://r:6379/2", "tls": true, "keyPrefix": "team:", "encryptionKey": "${SANDBOX_TEST_REDIS_KEY}"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Redis; r == nil || *r != (Redis{URL: "redis://r:6379/2", TLS: true, KeyPrefix: "team:", EncryptionKey: "a2V5"}) {
		t.Fatalf("redis = %+v", f.Redis)
	}
	if f, err := Parse("gw.json", []byte(`{"mcpServers": {}}`)); err != nil || f.Redis != nil {
		t.Fatalf("no redis block: %+v, %v", f.Redis, err)
	}
	for block, want := range map[string]string{
		`[]`:                                    `gw.json:1:41: "redis" must be an object`,
		`{"encryptionKey": "k"}`:                `gw.json:1:41: "redis" needs "url"`,
		`{"url": "redis://r"}`:                  `gw.json:1:41: "redis" needs "encryptionKey"`,
		`{"url": "redis://r", "password": "x"}`: `gw.json:1:62: unknown key "password" in "redis"; known keys: url, tls, keyPrefix, encryptionKey`,
	} {
		_, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"redis": `+block+`}}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("redis %s: %v, want %q", block, err, want)
		}
	}
}
