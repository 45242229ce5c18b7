package gateway

import (
	"encoding/json"
	"testing"
)

// TestInputRequiredOnlyForAskingCalls: a call made WithAsking reads an
// upstream's input_required answer however it is spelled (a \u escape
// included), a plain result is not one, and a call made without asking
// never takes one (its result is parsed as a tool result, as before).
func TestInputRequiredOnlyForAskingCalls(t *testing.T) {
	asking := &call{asking: &Asking{}}
	for _, tc := range []struct {
		raw, state string
	}{
		{`{"resultType":"input_required","inputRequests":{"a":{}},"requestState":"s1"}`, "s1"},
		{`{"resultType":"input\u005frequired","inputRequests":{},"requestState":"s2"}`, "s2"},
		{`{"result\u0054ype":"input_required","requestState":"s3"}`, "s3"},
	} {
		ir := asking.inputRequired(json.RawMessage(tc.raw))
		if ir == nil || ir.State != tc.state {
			t.Errorf("%s: read as %+v, want input_required with state %q", tc.raw, ir, tc.state)
		}
	}
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"input required"}]}`,
		`{"content":[{"type":"text","text":"\u00e9 input_required"}],"resultType":"complete"}`,
		`not json at all input_required`,
	} {
		if ir := asking.inputRequired(json.RawMessage(raw)); ir != nil {
			t.Errorf("%s: read as input_required %+v", raw, ir)
		}
	}
	plain := &call{}
	if ir := plain.inputRequired(json.RawMessage(`{"resultType":"input_required","requestState":"s"}`)); ir != nil {
		t.Errorf("a call made without asking took input_required: %+v", ir)
	}
}
