// Package atomicfile replaces a file only once its new content is complete:
// the content goes to a temporary file in the same folder, which is renamed
// over the old one, so a crash or a full disk leaves the old file or the new
// one whole, never half of each. Two writers never share a temporary file.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data, file mode perm. The folder must exist.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path with what write writes (for content too large to
// build in memory first), file mode perm. The folder must exist.
func WriteFunc(path string, perm os.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	werr := write(tmp)
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot write %s: %w", path, werr)
	}
	return nil
}

// WriteAll is Write that first makes missing folders, with mode dirPerm
// (0700 for files that are their owner's only).
func WriteAll(path string, data []byte, perm, dirPerm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return Write(path, data, perm)
}
