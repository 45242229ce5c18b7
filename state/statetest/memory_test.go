package statetest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/console"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/runs"
	"github.com/sandboxrt/sandbox/state/statetest"
)

func TestMemoryTokenStore(t *testing.T) {
	statetest.TestTokenStore(t, func(*testing.T) gateway.TokenStore { return gateway.NewMemoryTokenStore() })
}

func TestMemoryRateLimiter(t *testing.T) {
	statetest.TestRateLimiter(t, func(_ *testing.T, now func() time.Time) gateway.RateLimiter {
		return gateway.NewMemoryRateLimiter(now)
	})
}

func TestMemoryQuestionLedger(t *testing.T) {
	statetest.TestQuestionLedger(t, func(*testing.T) gateway.QuestionLedger { return gateway.NewMemoryQuestionLedger() },
		func(*testing.T) (gateway.QuestionLedger, gateway.QuestionLedger) {
			l := gateway.NewMemoryQuestionLedger() // one process: its calls share the one ledger
			return l, l
		})
}

func TestMemoryStore(t *testing.T) {
	statetest.TestStore(t, func(_ *testing.T, limits codemode.StoreLimits, now func() time.Time) codemode.Store {
		s, err := codemode.NewMemoryStore("", limits, now)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMemoryStoreInAFile(t *testing.T) {
	dir := t.TempDir()
	n := 0
	statetest.TestStore(t, func(t *testing.T, limits codemode.StoreLimits, now func() time.Time) codemode.Store {
		n++
		s, err := codemode.NewMemoryStore(filepath.Join(dir, fmt.Sprintf("store%d.json", n)), limits, now)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestFileOAuthStore(t *testing.T) {
	dir := t.TempDir()
	n := 0
	statetest.TestOAuthStore(t, func(t *testing.T) gateway.OAuthStore {
		n++
		s, err := gateway.NewFileOAuthStore(filepath.Join(dir, fmt.Sprintf("tokens%d.json", n)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestScriptBook(t *testing.T) {
	statetest.TestScriptStore(t, func(t *testing.T) codemode.ScriptStore {
		b, err := codemode.OpenScripts("") // the file is codemode's own test
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestMemoryUsage(t *testing.T) {
	statetest.TestUsageStore(t, func(_ *testing.T, now func() time.Time) codemode.UsageStore {
		u, err := codemode.NewMemoryUsage("", now)
		if err != nil {
			t.Fatal(err)
		}
		return u
	})
}

// TestMemoryUsageInAFile: the default keeps its pairs in a file, reopened
// with the same answers, through every case of the contract.
func TestMemoryUsageInAFile(t *testing.T) {
	dir := t.TempDir()
	n := 0
	statetest.TestUsageStore(t, func(t *testing.T, now func() time.Time) codemode.UsageStore {
		n++
		path := filepath.Join(dir, fmt.Sprintf("usage%d.json", n))
		u, err := codemode.NewMemoryUsage(path, now)
		if err != nil {
			t.Fatal(err)
		}
		return reopening{u, path, now}
	})
}

// reopening saves a MemoryUsage after each Record and reads it back from
// its file before each Evidence.
type reopening struct {
	*codemode.MemoryUsage
	path string
	now  func() time.Time
}

func (r reopening) Record(ctx context.Context, principal string, words, tools []string) error {
	if err := r.MemoryUsage.Record(ctx, principal, words, tools); err != nil {
		return err
	}
	return r.Save()
}

func (r reopening) Evidence(ctx context.Context, words []string) (map[string]map[string]int, error) {
	again, err := codemode.NewMemoryUsage(r.path, r.now)
	if err != nil {
		return nil, err
	}
	return again.Evidence(ctx, words)
}

func TestFileResultStore(t *testing.T) {
	statetest.TestResultStore(t, func(t *testing.T, limits codemode.ResultLimits, now func() time.Time) codemode.ResultStore {
		s, err := codemode.NewFileResultStore(t.TempDir(), limits, now)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMemoryRunStore(t *testing.T) {
	statetest.TestRunStore(t, func(_ *testing.T, now func() time.Time) runs.Store { return runs.NewMemoryStore(now) })
	statetest.TestRunLease(t, func(_ *testing.T, now func() time.Time) runs.Store { return runs.NewMemoryStore(now) })
}

func TestMemoryReleasedRuns(t *testing.T) {
	statetest.TestReleasedRunStore(t, func(_ *testing.T, maxBytes int64, now func() time.Time) frontend.ReleasedRunStore {
		return frontend.NewMemoryReleasedRuns(maxBytes, now)
	})
}

func TestMemoryConsoleRevocations(t *testing.T) {
	statetest.TestConsoleRevocations(t, func(*testing.T) console.Revocations { return console.NewMemoryRevocations(nil) })
}

func TestMemoryDeskStore(t *testing.T) {
	statetest.TestDeskStore(t, func(*testing.T) gateway.DeskStore { return gateway.NewMemoryDeskStore(nil) })
}

func TestMemorySignInStore(t *testing.T) {
	statetest.TestSignInStore(t, func(*testing.T) gateway.SignInStore { return gateway.NewMemorySignInStore(nil) })
}
