package conformancefixture_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sandboxrt/sandbox/internal/conformancefixture"
	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
)

// serverScenarios are the server scenarios of @modelcontextprotocol/conformance
// 0.1.16, the ones docs/fixtures.md maps to fixtures. The test fails when the
// pinned suite lists others, so a suite upgrade cannot silently add
// scenarios nobody looked at.
var serverScenarios = []string{
	"server-initialize", "logging-set-level", "ping", "completion-complete",
	"tools-list", "tools-call-simple-text", "tools-call-image", "tools-call-audio",
	"tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging",
	"tools-call-error", "tools-call-with-progress", "tools-call-sampling",
	"tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
	"server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums",
	"resources-list", "resources-read-text", "resources-read-binary",
	"resources-templates-read", "resources-subscribe", "resources-unsubscribe",
	"prompts-list", "prompts-get-simple", "prompts-get-with-args",
	"prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
}

// TestConformanceSuiteDirect runs the real conformance suite against the
// fixture served by NewHTTPHandler on loopback, and requires every server
// scenario to pass, with the checks that only report a warning when a server
// falls short (SSE priming, retry, resume) counted as real successes.
func TestConformanceSuiteDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite (Node 22); skipped with -short")
	}
	listed := suite.List(t)
	slices.Sort(listed)
	want := slices.Clone(serverScenarios)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("the pinned conformance suite lists server scenarios\n%v\nbut the fixture was built for\n%v\nupdate the fixture, serverScenarios and docs/fixtures.md", listed, want)
	}

	mux := http.NewServeMux()
	mux.Handle("/mcp", conformancefixture.NewHTTPHandler(conformancefixture.New()))
	srv := httptest.NewServer(mux) // listens on 127.0.0.1, which dns-rebinding-protection requires
	defer srv.Close()

	results := suite.Run(t, srv.URL+"/mcp")
	for _, name := range serverScenarios {
		s, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no result", name)
		case !s.Passed():
			t.Errorf("%s failed:\n%s", name, s.Failures())
		case s.Count("SUCCESS") == 0:
			t.Errorf("%s: passed without a single successful check: %+v", name, s.Checks)
		}
	}
	t.Logf("%d of %d server scenarios passed", len(results.Passed()), len(serverScenarios))

	// SEP-1699 checks that are only warnings when missing: require them.
	polling := results["server-sse-polling"]
	for _, id := range []string{"server-sse-priming-event", "server-sse-retry-field", "server-sse-disconnect-resume"} {
		if !hasCheck(polling, id, "SUCCESS") {
			t.Errorf("server-sse-polling: check %s did not succeed: %+v", id, polling.Checks)
		}
	}
}

func hasCheck(s suite.Scenario, id, status string) bool {
	for _, c := range s.Checks {
		if c.ID == id && c.Status == status {
			return true
		}
	}
	return false
}

// TestConformanceSuiteNextDirect runs the scenarios suite 0.2 requires of
// protocol 2026-07-28 against the fixture directly: every one passes. It is
// the control of the gateway's run (cmd/sandbox TestServeConformanceNext):
// what fails through the gateway and passes here is the gateway's fault.
func TestConformanceSuiteNextDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite (Node 22); skipped with -short")
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", conformancefixture.NewHTTPHandler(conformancefixture.New()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	required := suite.Required(t, "2026-07-28")
	results := suite.RunWith(t, srv.URL+"/mcp", suite.Options{Next: true, Requirements: "2026-07-28"})
	passed := 0
	for _, name := range required {
		s, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no result", name)
		case !s.Passed():
			t.Errorf("%s failed:\n%s", name, s.Failures())
		default:
			passed++
		}
	}
	t.Logf("%d of %d server scenarios required for 2026-07-28 passed", passed, len(required))
}
