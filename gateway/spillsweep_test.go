//go:build unix

package gateway

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStagingFoldersOfDeadGatewaysAreSwept: a gateway making its staging
// folder removes the folders of gateways that died without closing (their
// lock is free), keeps a live one's (locked) and a young folder without a
// lock file (its owner may be about to lock it), and its own folder is
// locked until Close removes it.
func TestStagingFoldersOfDeadGatewaysAreSwept(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, lock bool) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "part"), []byte("staged"), 0o600); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(dir, spillOwnerFile), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := mk("sandbox-spill-dead", true)
	live := mk("sandbox-spill-live", true)
	held, err := holdSpillDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	oldNoLock := mk("sandbox-spill-old", false)
	past := time.Now().Add(-2 * youngSpillDir)
	if err := os.Chtimes(oldNoLock, past, past); err != nil {
		t.Fatal(err)
	}
	youngNoLock := mk("sandbox-spill-young", false)
	other := mk("not-ours", true)

	g, _ := startGateway(t, `{"mcpServers": {}}`, WithSpillDir(base))
	own, err := g.stageDir()
	if err != nil {
		t.Fatal(err)
	}
	exists := func(dir string) bool { _, err := os.Stat(dir); return err == nil }
	for dir, want := range map[string]bool{dead: false, oldNoLock: false, live: true, youngNoLock: true, other: true, own: true} {
		if exists(dir) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(dir), !want, want)
		}
	}
	// Another gateway sweeping now leaves the first one's folder alone.
	if n := sweepSpillDirs(base, ""); n != 0 || !exists(own) {
		t.Fatalf("a live gateway's folder was swept (%d removed)", n)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(own) {
		t.Fatal("Close left its staging folder")
	}
}
