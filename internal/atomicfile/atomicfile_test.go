package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "state.json")
	if err := atomicfile.WriteAll(path, []byte("one"), 0o600, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "two" {
		t.Fatalf("read %q, %v", b, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if d, _ := os.Stat(filepath.Dir(path)); d.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", d.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	// A folder where the file should be: an error naming the path, and
	// no temporary file left.
	if err := atomicfile.Write(filepath.Dir(path), []byte("x"), 0o600); err == nil {
		t.Error("writing over a folder succeeded")
	}
	// Write makes no folders: a missing one is an error.
	if err := atomicfile.Write(filepath.Join(filepath.Dir(path), "no", "x"), []byte("x"), 0o600); err == nil {
		t.Error("Write made a missing folder")
	}
}

// TestWriteFuncThatFailsLeavesTheOldFile: a write that fails half way
// leaves the old content and no temporary file behind.
func TestWriteFuncThatFailsLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := atomicfile.Write(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.WriteFunc(path, 0o600, func(w io.Writer) error {
		w.Write([]byte("half of the new"))
		return errors.New("disk full")
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("content %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}
