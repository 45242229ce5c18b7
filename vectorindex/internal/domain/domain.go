// Package domain holds the software-domain word vectors that vectorindex
// embeds in the binary: for the ~19,500 words that occur at least five times
// in Debian's package descriptions and the Linux manual pages, a 128-dim
// vector such that words used in the same contexts point the same way
// ("invoice", "customer", "purchase"; "directory", "subdirectory", "path";
// "history", "commit", "branch"). They are aggregate statistics of real
// text (see PROVENANCE.md), computed by ./gen; `go generate` rebuilds
// domain.bin. No text of the sources is kept.
package domain

//go:generate go run ./gen -o domain.bin

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/sandboxrt/sandbox/vectorindex/internal/binfile"
)

//go:embed domain.bin
var embedded []byte

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
	loadOnce.Do(func() { loaded, loadErr = Decode(embedded) })
	if loadErr != nil {
		// The file is generated and embedded at build time; a decode error
		// means a broken build, not bad input.
		panic("vectorindex/internal/domain: embedded domain.bin is corrupt: " + loadErr.Error())
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

// Decode parses a vector file as ./gen writes it.
func Decode(data []byte) (*Vectors, error) {
	r, err := binfile.Open(data, magic)
	if err != nil {
		return nil, fmt.Errorf("domain vectors: %w", err)
	}
	v := &Vectors{dims: r.Uvarint()}
	n := r.Uvarint()
	if r.Err == nil && (v.dims <= 0 || v.dims > 1024 || n > r.Len()) {
		return nil, fmt.Errorf("domain vectors: bad header (%d dims, %d words)", v.dims, n)
	}
	v.words = make([]string, 0, n)
	prev := ""
	for i := 0; i < n && r.Err == nil; i++ {
		p := r.Uvarint()
		if p > len(prev) {
			return nil, errors.New("domain vectors: bad front coding")
		}
		s := r.Bytes(r.Uvarint())
		w := prev[:p] + string(s)
		if i > 0 && w <= prev {
			return nil, errors.New("domain vectors: words out of order")
		}
		v.words = append(v.words, w)
		prev = w
	}
	v.freq = append([]byte(nil), r.Bytes(n)...) // a copy: Vectors does not pin the input
	q := r.Bytes(n * v.dims)
	if r.Err != nil {
		return nil, fmt.Errorf("domain vectors: %w", r.Err)
	}
	if r.Len() != 0 {
		return nil, errors.New("domain vectors: trailing data")
	}
	v.vecs = make([]int8, len(q))
	for i, b := range q {
		v.vecs[i] = int8(b)
	}
	return v, nil
}
