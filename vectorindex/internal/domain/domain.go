// Package domain holds the software-domain word vectors that vectorindex
// embeds in the binary: for the ~19,500 words that occur at least five times
// in Debian's package descriptions and the Linux manual pages, a 128-dim
// vector such that words used in the same contexts point the same way
// ("invoice", "customer", "purchase"; "directory", "subdirectory", "path";
// "history", "commit", "branch"). They are aggregate statistics of real
// text (see PROVENANCE.md), computed by ./gen; `go generate` rebuilds
// domain.bin.gz. No text of the sources is kept.
package domain

//go:generate go run ./gen -o domain.bin.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
)

//go:embed domain.bin.gz
var compressed []byte

const magic = "SBXDOM1\n"

// Vectors is read-only after Decode and safe for concurrent use.
type Vectors struct {
	dims  int
	words []string // sorted bytewise; a word's id is its index
	freq  []byte   // round(16*log2(1+count)) in the training text
	vecs  []int8   // id*dims ...
}

var (
	loadOnce sync.Once
	loaded   *Vectors
	loadErr  error
)

// Default returns the embedded vectors, decoding them on first use.
func Default() *Vectors {
	loadOnce.Do(func() { loaded, loadErr = Decode(compressed) })
	if loadErr != nil {
		// The file is generated and embedded at build time; a decode error
		// means a broken build, not bad input.
		panic("vectorindex/internal/domain: embedded domain.bin.gz is corrupt: " + loadErr.Error())
	}
	return loaded
}

// Dims is the length of the vectors.
func (v *Vectors) Dims() int { return v.dims }

// Len is the number of words with a vector.
func (v *Vectors) Len() int { return len(v.words) }

// ID finds a word (a vectorindex term: lowercased lemma).
func (v *Vectors) ID(w string) (int, bool) {
	i := sort.SearchStrings(v.words, w)
	return i, i < len(v.words) && v.words[i] == w
}

// Word is the word with the given id.
func (v *Vectors) Word(id int) string { return v.words[id] }

// Vector is the word's vector, quantised: direction only, scale it to unit
// length before use.
func (v *Vectors) Vector(id int) []int8 { return v.vecs[id*v.dims : (id+1)*v.dims] }

// Count is about how often the word occurs in the training text (within
// 5%): rare words have noisier vectors.
func (v *Vectors) Count(id int) float64 {
	return math.Exp2(float64(v.freq[id])/16) - 1
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uv() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<31 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) bytesN(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// maxDecoded bounds the decompressed size, so that a corrupt or hostile
// file cannot make Decode allocate without limit.
const maxDecoded = 64 << 20

// Decode parses a gzip-compressed vector file as ./gen writes it.
func Decode(gz []byte) (*Vectors, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxDecoded+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxDecoded {
		return nil, errors.New("domain vectors: file too large")
	}
	if !bytes.HasPrefix(raw, []byte(magic)) {
		return nil, errors.New("domain vectors: bad magic")
	}
	r := &reader{b: raw[len(magic):]}
	v := &Vectors{dims: r.uv()}
	n := r.uv()
	if r.err == nil && (v.dims <= 0 || v.dims > 1024 || n > len(r.b)) {
		return nil, fmt.Errorf("domain vectors: bad header (%d dims, %d words)", v.dims, n)
	}
	v.words = make([]string, 0, n)
	prev := ""
	for i := 0; i < n && r.err == nil; i++ {
		p := r.uv()
		if p > len(prev) {
			return nil, errors.New("domain vectors: bad front coding")
		}
		s := r.bytesN(r.uv())
		w := prev[:p] + string(s)
		if i > 0 && w <= prev {
			return nil, errors.New("domain vectors: words out of order")
		}
		v.words = append(v.words, w)
		prev = w
	}
	v.freq = append([]byte(nil), r.bytesN(n)...) // a copy: the decoded file can go
	q := r.bytesN(n * v.dims)
	if r.err != nil {
		return nil, fmt.Errorf("domain vectors: %w", r.err)
	}
	if len(r.b) != 0 {
		return nil, errors.New("domain vectors: trailing data")
	}
	v.vecs = make([]int8, len(q))
	for i, b := range q {
		v.vecs[i] = int8(b)
	}
	return v, nil
}
