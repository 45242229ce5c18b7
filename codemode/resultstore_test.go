package codemode

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A whole file on the same file system is linked, not copied: the held
// result outlives the file it came from. A file read from elsewhere than
// its start is copied from there.
func TestFileResultStoreLinksWholeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := NewFileResultStore(filepath.Join(dir, "results"), ResultLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := filepath.Join(dir, "spilled.json")
	if err := os.WriteFile(src, []byte(`"0123456789"`), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(id string) string {
		rc, err := s.Open(ctx, "alice", id, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b)
	}
	f, _ := os.Open(src)
	if err := s.Put(ctx, HeldResult{ID: "res_linked", Principal: "alice", Tool: "t", Bytes: 12}, f); err != nil {
		t.Fatal(err)
	}
	f.Seek(4, io.SeekStart)
	if err := s.Put(ctx, HeldResult{ID: "res_copied", Principal: "alice", Tool: "t", Bytes: 8}, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(src)
	if got := read("res_linked"); got != `"0123456789"` {
		t.Errorf("linked: %q", got)
	}
	if got := read("res_copied"); got != `3456789"` {
		t.Errorf("copied from offset 4: %q", got)
	}
	// A store opened on the folder again starts empty: its index was the
	// process's.
	s2, err := NewFileResultStore(filepath.Join(dir, "results"), ResultLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s2.Get(ctx, "alice", "res_linked"); ok {
		t.Error("a result outlived its store's process")
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "results")); len(left) != 0 {
		t.Errorf("files left: %d", len(left))
	}
	if err := s.Put(ctx, HeldResult{ID: "../escape", Principal: "alice", Bytes: 1}, strings.NewReader("x")); err == nil {
		t.Error("an id with a path in it was taken")
	}
}

// A result a crashed process was still writing is removed with the rest
// when the store opens on its folder again: nothing would ever read it.
func TestFileResultStoreRemovesHalfWrittenResults(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"res_whole", ".writing-123"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewFileResultStore(dir, ResultLimits{}, nil); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left from the last process: %v", left)
	}
}
