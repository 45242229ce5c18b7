package config

import (
	"strings"
	"testing"
)

func TestGatewayPprof(t *testing.T) {
	file, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"pprof": true}}`))
	if err != nil || !file.Pprof {
		t.Fatalf("pprof true: %v %v", err, file)
	}
	file, err = Parse("gw.json", []byte(`{"mcpServers": {}}`))
	if err != nil || file.Pprof {
		t.Fatalf("pprof is off by default: %v %v", err, file.Pprof)
	}
	_, err = Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"pprof": "yes"}}`))
	if err == nil || !strings.Contains(err.Error(), `"pprof"`) {
		t.Fatalf("pprof \"yes\": %v", err)
	}
}
