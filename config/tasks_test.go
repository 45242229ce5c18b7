package config

import (
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runs"
)

// TestParseTasks: the "tasks" block of "gateway" sets the runs' limits key
// by key; what is wrong is an error at its position.
func TestParseTasks(t *testing.T) {
	f, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"tasks":
		{"maxTTL": "2h", "defaultTTL": "10m", "livePerPrincipal": 4, "keptPerPrincipal": 50, "resultBytesPerPrincipal": 1048576, "resultBytesTotal": 8388608, "lease": "3s", "consoleLines": 5}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := runs.Limits{MaxTTL: 2 * time.Hour, DefaultTTL: 10 * time.Minute, LivePerPrincipal: 4, KeptPerPrincipal: 50, ResultBytesPerPrincipal: 1 << 20, ResultBytesTotal: 8 << 20, Lease: 3 * time.Second, ConsoleLines: 5}
	if f.Tasks != want {
		t.Fatalf("tasks = %+v", f.Tasks)
	}
	for block, want := range map[string]string{
		`[]`:                                   `"tasks" must be an object`,
		`{"maxTTL": "1h", "defaultTTL": "2h"}`: `"defaultTTL" (2h0m0s) is longer than "maxTTL" (1h0m0s)`,
		`{"livePerPrincipal": 0}`:              `"livePerPrincipal" must be a positive whole number`,
		`{"ttl": "1h"}`:                        `unknown key "ttl" in "tasks"; known keys: maxTTL, defaultTTL`,
	} {
		_, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"tasks": `+block+`}}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("tasks %s: %v, want %q", block, err, want)
		}
	}
}
