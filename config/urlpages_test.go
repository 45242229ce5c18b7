package config

import (
	"strings"
	"testing"
)

// TestGatewayPublicURLAndApprovalMode: "publicURL" takes an http(s) URL
// with a path prefix, and refuses what a browser could not be sent to;
// "policy.approvalMode" takes "form" or "url".
func TestGatewayPublicURLAndApprovalMode(t *testing.T) {
	file, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"publicURL": "https://gw.example.com/sandbox", "policy": {"approvalMode": "url"}}}`))
	if err != nil || file.PublicURL != "https://gw.example.com/sandbox" || file.Gateway.Settings.Policy.ApprovalMode != "url" {
		t.Fatalf("parsed: %v %+v", err, file)
	}
	for _, bad := range []string{`"gw.example.com"`, `"ftp://gw.example.com"`, `"https://gw.example.com/?x=1"`, `"https://"`} {
		_, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"publicURL": `+bad+`}}`))
		if err == nil || !strings.Contains(err.Error(), `"publicURL"`) || !strings.Contains(err.Error(), "gw.json:1:") {
			t.Errorf("publicURL %s: %v", bad, err)
		}
	}
	_, err = Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"policy": {"approvalMode": "page"}}}`))
	if err == nil || !strings.Contains(err.Error(), `give "form"`) {
		t.Errorf("approvalMode page: %v", err)
	}
}
