package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
)

// TestServeConformanceNext runs what conformance suite 0.2 requires of
// protocol 2026-07-28 (`--requirements 2026-07-28`) against `sandbox serve`
// in pass-through mode in front of the conformance fixture, which passes
// every one of them directly (conformancefixture's
// TestConformanceSuiteNextDirect): through the gateway every one passes
// too, the input-required-result-* scenarios (input_required relayed under
// the gateway's own requestState, the retry's answers sent back upstream)
// and server-stateless (the upstream's -32021 passed on with HTTP 400)
// among them. Then the whole suite (`--suite all`), the tasks scenarios
// included (tasks-mrtr-composition: a tool that asks before it becomes a
// task): every one passes.
func TestServeConformanceNext(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite")
	}
	fixture := exec.Command(suite.BuildFixture(t), "-http", "127.0.0.1:0")
	upstream := startLogged(t, fixture, regexp.MustCompile(`serving (http://\S+/mcp)`))
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"url": %q}}, "gateway": {"toolNames": "passthrough"}}`, upstream), "--expose", "all")

	required := suite.Required(t, "2026-07-28")
	results := suite.RunWith(t, url, suite.Options{Next: true, Requirements: "2026-07-28"})
	passed := 0
	for _, name := range required {
		s, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no result", name)
		case !s.Passed():
			t.Errorf("%s", s.Failures())
		default:
			passed++
		}
	}
	for _, name := range []string{"server-stateless", "input-required-result-basic-elicitation", "input-required-result-tampered-state", "input-required-result-capability-check", "input-required-result-non-tool-request"} {
		if !strings.Contains(strings.Join(required, " "), name) {
			t.Errorf("suite 0.2 no longer requires %s of 2026-07-28: look at what it requires now", name)
		}
	}
	t.Logf("suite 0.2 through sandbox serve: %d of %d server scenarios required for 2026-07-28 pass", passed, len(required))

	all := suite.RunWith(t, url, suite.Options{Next: true})
	var failed []string
	for name, s := range all {
		if !s.Passed() {
			failed = append(failed, name)
			t.Errorf("%s", s.Failures())
		}
	}
	t.Logf("suite 0.2 --suite all through sandbox serve: %d of %d scenarios pass; failing: %v", len(all)-len(failed), len(all), failed)
}

// TestServeTasksAskThroughA2025StdioUpstream: the conformance fixture as a
// stdio upstream on protocol 2025-11-25, where its input_required becomes
// elicitation/create requests back on the one stdio stream (mcp-go's
// bridge sends a tool's two at once): suite 0.2's tasks-mrtr-input passes
// through sandbox serve, partial fulfillment included: the requests reach
// the task (the call in flight on the server is the task's), both show in
// tasks/get at once, and an answer to one leaves the other pending.
func TestServeTasksAskThroughA2025StdioUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite")
	}
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"command": %q, "protocolVersion": "2025-11-25"}}, "gateway": {"toolNames": "passthrough"}}`, suite.BuildFixture(t)), "--expose", "all")
	const scenario = "tasks-mrtr-input"
	s, ok := suite.RunWith(t, url, suite.Options{Next: true, Scenarios: []string{scenario}})[scenario]
	if !ok {
		t.Fatalf("%s: no result", scenario)
	}
	if !s.Passed() {
		t.Fatalf("%s", s.Failures())
	}
	partial := false
	for _, c := range s.Checks {
		partial = partial || (c.ID == "tasks-mrtr-partial-fulfillment" && c.Status == "SUCCESS")
	}
	if !partial {
		t.Errorf("%s no longer reports its partial-fulfillment check: %+v", scenario, s.Checks)
	}
}
