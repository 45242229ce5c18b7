// Package suite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in peers/) against a server URL
// from a Go test and returns what every server scenario checked.
//
// It is shared by the fixture's own test (the suite against the fixture,
// directly) and the gateway's (the suite against `sandbox serve` in front of
// the fixture), so both read results the same way: the suite's checks.json
// per scenario, not its console output.
package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// Check is one check of a scenario, as the suite reports it.
type Check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// Scenario is the outcome of one server scenario.
type Scenario struct {
	Name   string
	Checks []Check
}

// Count returns how many checks ended with status (e.g. "SUCCESS").
func (s Scenario) Count(status string) int {
	n := 0
	for _, c := range s.Checks {
		if c.Status == status {
			n++
		}
	}
	return n
}

// Passed reports whether the scenario ran at least one check and none failed,
// which is how the suite's own summary marks a scenario ✓.
func (s Scenario) Passed() bool { return len(s.Checks) > 0 && s.Count("FAILURE") == 0 }

// Failures describes the failed checks, one per line, for test messages.
func (s Scenario) Failures() string {
	var b strings.Builder
	for _, c := range s.Checks {
		if c.Status == "FAILURE" {
			fmt.Fprintf(&b, "%s: %s: %s\n", s.Name, c.Name, c.ErrorMessage)
		}
	}
	return b.String()
}

// Results maps scenario name to its outcome.
type Results map[string]Scenario

// Passed returns the names of the scenarios that passed, sorted.
func (r Results) Passed() []string {
	var out []string
	for name, s := range r {
		if s.Passed() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Run runs the named server scenarios (all of them, pending ones included,
// when none are named) of the pinned suite 0.1.16 against url, e.g.
// http://127.0.0.1:PORT/mcp, and returns their results. It needs the npm
// peers (Node 22 and the suite) and skips or fails the test as testpeers
// does when they are missing. A scenario that failed is a result, not an
// error; Run fails the test only when the suite itself could not run or
// left no results.
func Run(t testing.TB, url string, scenarios ...string) Results {
	t.Helper()
	return RunWith(t, url, Options{Scenarios: scenarios})
}

// Options choose which pinned suite runs and which of its scenarios.
type Options struct {
	// Next runs the pinned suite 0.2 (peers' conformance-next: protocol
	// 2026-07-28, input_required, tasks) instead of 0.1.16.
	Next bool
	// Requirements runs exactly the scenarios a spec revision requires
	// ("2026-07-28", suite 0.2 only) at that revision's wire, rather than
	// --suite all.
	Requirements string
	// Scenarios names the scenarios to keep (one is run alone); none: all
	// that ran.
	Scenarios []string
}

// RunWith runs a pinned suite against url as opts say (see Run).
func RunWith(t testing.TB, url string, opts Options) Results {
	t.Helper()
	node, script := testpeers.Node(t), entryPoint(t, opts.Next)
	out := t.TempDir()
	scenarios := opts.Scenarios

	args := []string{script, "server", "--url", url, "-o", out}
	switch {
	case len(scenarios) == 1:
		args = append(args, "--scenario", scenarios[0])
	case opts.Requirements != "":
		args = append(args, "--requirements", opts.Requirements)
	default:
		args = append(args, "--suite", "all")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = testpeers.Env(t)
	var console bytes.Buffer
	cmd.Stdout, cmd.Stderr = &console, &console
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("conformance suite did not finish within 5 minutes against %s; output so far:\n%s", url, console.String())
	}
	// Exit status 1 only means some check failed; the results say which.
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("running the conformance suite: %v", err)
	}

	results, perr := readResults(out)
	if perr != nil {
		t.Fatalf("reading conformance results: %v\nsuite output:\n%s", perr, console.String())
	}
	if len(scenarios) > 1 {
		want := map[string]bool{}
		for _, s := range scenarios {
			want[s] = true
		}
		for name := range results {
			if !want[name] {
				delete(results, name)
			}
		}
	}
	for _, s := range scenarios {
		if _, ok := results[s]; !ok {
			t.Fatalf("conformance suite left no result for scenario %q (is it a server scenario of this version? see List)\nsuite output:\n%s", s, console.String())
		}
	}
	return results
}

// List returns the names of all server scenarios of the pinned suite
// 0.1.16, as `conformance list` prints them.
func List(t testing.TB) []string {
	t.Helper()
	return list(t, false)
}

// Required returns the server scenarios suite 0.2 requires of a spec
// revision (e.g. "2026-07-28"), as `conformance list --requirements` prints
// them.
func Required(t testing.TB, revision string) []string {
	t.Helper()
	return list(t, true, "--requirements", revision)
}

func list(t testing.TB, next bool, args ...string) []string {
	t.Helper()
	cmd := exec.Command(testpeers.Node(t), append([]string{entryPoint(t, next), "list"}, args...)...)
	cmd.Env = testpeers.Env(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	var names []string
	inServer := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Server scenarios"):
			inServer = true
		case !strings.HasPrefix(line, " ") && strings.TrimSpace(line) != "":
			inServer = false
		case inServer && strings.HasPrefix(strings.TrimSpace(line), "- "):
			name := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "- "))[0]
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list printed no server scenarios:\n%s", out)
	}
	return names
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildFixture builds the fixture's command
// (internal/conformancefixture/cmd/conformance-fixture) once per test binary
// and returns its path, for tests that run the fixture as a stdio upstream,
// e.g. behind the gateway. The binary lives in a temporary folder that the
// operating system cleans up; it is not removed when the test ends, because
// other tests of the same process reuse it.
func BuildFixture(t testing.TB) string {
	t.Helper()
	root := testpeers.RepoRoot(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "conformance-fixture-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "conformance-fixture")
		cmd := exec.Command("go", "build", "-o", buildPath, "./internal/conformancefixture/cmd/conformance-fixture")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the conformance fixture: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// entryPoint is the suite's command: 0.1.16, or 0.2 (next), which
// peers/package.json pins under the alias conformance-next beside it.
func entryPoint(t testing.TB, next bool) string {
	if next {
		return filepath.Join(testpeers.Package(t, "conformance-next"), "dist", "index.js")
	}
	return filepath.Join(testpeers.Package(t, "@modelcontextprotocol/conformance"), "dist", "index.js")
}

// resultDir matches the suite's per-scenario output folders:
// server-<scenario>-<ISO timestamp with : and . replaced by ->.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

func readResults(dir string) (Results, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	results := Results{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return nil, err
		}
		var checks []Check
		if err := json.Unmarshal(data, &checks); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		results[m[1]] = Scenario{Name: m[1], Checks: checks}
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("no scenario results in %s", dir)
	}
	return results, nil
}
