package vectorindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// The persisted index is one file of our own format, storeFile: the tools,
// their vectors and their analysed terms. It is read whole at start and
// written whole (aside, then renamed) after each change.
//
// Why not chromem-go's export (gob) as before: a warm start of 10,230 tools
// spent ~0.25 s in gob's decoder alone (serially: gob cannot be split), and
// as much again decoding each tool's JSON, hashing it to check it, and
// analysing it for BM25 once more. This format keeps what the search needs
// ready to use: terms and vectors, no JSON, no re-analysis. The file's
// integrity is one CRC over it (a damaged file is a cache miss: the next
// Sync embeds again), and the analysis is tagged with analyzerVersion so that
// a change of the analyser re-analyses instead of trusting stale terms.
//
// Layout, little-endian, "str" being a uvarint length then the bytes:
//
//	magic       storeMagic
//	header      uvarint format, str embedder id, str analyzerVersion,
//	            uvarint dims, uvarint tools, uvarint strings
//	strings     the distinct terms and words the tools use (str each)
//	tools       per tool: str id, hash, server, name, title, description,
//	            schema; f32 length; uvarint n then n × (uvarint string,
//	            f32 weight) terms; uvarint n then n × uvarint words;
//	            uvarint n then n × uvarint name words
//	vectors     per tool, dims × f32
//	crc         u32, CRC-32C of everything before it
const (
	storeFile   = "index.bin"
	storeMagic  = "sandbox-vectorindex\n"
	storeFormat = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeStore is the file for these entries, all of the given dims.
func encodeStore(embedderID string, dims int, entries []*entry) []byte {
	ids := map[string]uint64{}
	var table []string
	intern := func(s string) uint64 {
		if i, ok := ids[s]; ok {
			return i
		}
		ids[s] = uint64(len(table))
		table = append(table, s)
		return uint64(len(table) - 1)
	}
	var tools []byte
	for _, e := range entries {
		t := e.tool
		for _, s := range []string{t.ID, e.hash, t.Server, t.Name, t.Title, t.Description} {
			tools = appendStr(tools, s)
		}
		tools = binary.AppendUvarint(tools, uint64(len(t.InputSchema)))
		tools = append(tools, t.InputSchema...)
		tools = appendF32(tools, e.terms.length)
		tools = binary.AppendUvarint(tools, uint64(len(e.terms.terms)))
		for _, w := range e.terms.terms {
			tools = binary.AppendUvarint(tools, intern(w.term))
			tools = appendF32(tools, w.w)
		}
		for _, list := range [][]string{e.terms.words, e.terms.name} {
			tools = binary.AppendUvarint(tools, uint64(len(list)))
			for _, w := range list {
				tools = binary.AppendUvarint(tools, intern(w))
			}
		}
	}
	b := []byte(storeMagic)
	b = binary.AppendUvarint(b, storeFormat)
	b = appendStr(b, embedderID)
	b = appendStr(b, analyzerVersion)
	b = binary.AppendUvarint(b, uint64(dims))
	b = binary.AppendUvarint(b, uint64(len(entries)))
	b = binary.AppendUvarint(b, uint64(len(table)))
	for _, s := range table {
		b = appendStr(b, s)
	}
	b = append(b, tools...)
	for _, e := range entries {
		for _, x := range e.vec {
			b = appendF32(b, x)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// errStaleStore is a store file that is whole but not usable as it is: of
// another embedder (its vectors are of another space) or another analyser.
var errStaleStore = errors.New("vectorindex: the store was written for another embedder or analyser")

// decodeStore reads a file written by encodeStore for this embedder. It
// trusts nothing in it: every length is checked against what is left of the
// file, so a damaged file is an error, never a panic, and no allocation is
// larger than a small multiple of the file.
func decodeStore(b []byte, embedderID string) ([]*entry, error) {
	if len(b) < len(storeMagic)+4 || string(b[:len(storeMagic)]) != storeMagic {
		return nil, errors.New("vectorindex: not an index store")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errors.New("vectorindex: the index store is damaged (checksum)")
	}
	r := &storeReader{b: body[len(storeMagic):]}
	if r.uvarint() != storeFormat {
		return nil, errStaleStore
	}
	if r.str() != embedderID || r.str() != analyzerVersion {
		if r.err != nil {
			return nil, r.err
		}
		return nil, errStaleStore
	}
	dims, n, nstr := r.count(1<<16), r.count(len(r.b)), r.count(len(r.b))
	if r.err == nil && n > 0 && dims == 0 {
		r.fail()
	}
	table := make([]string, 0, nstr)
	for range nstr {
		table = append(table, r.str())
	}
	word := func() string {
		i := r.uvarint()
		if i >= uint64(len(table)) {
			r.fail()
			return ""
		}
		return table[i]
	}
	// Capacities are bounded by what the rest of the file can hold (a tool
	// takes at least 14 bytes, a term 5, a word 1).
	entries := make([]*entry, 0, min(n, len(r.b)/14))
	for range n {
		if r.err != nil {
			break
		}
		e := &entry{}
		e.tool.ID, e.hash = r.str(), r.str()
		e.tool.Server, e.tool.Name, e.tool.Title, e.tool.Description = r.str(), r.str(), r.str(), r.str()
		if s := r.bytes(); len(s) > 0 {
			e.tool.InputSchema = append([]byte(nil), s...)
		}
		e.terms.length = r.f32()
		nt := r.count(len(r.b))
		e.terms.terms = make([]weighted, 0, min(nt, len(r.b)/5))
		for range nt {
			e.terms.terms = append(e.terms.terms, weighted{term: word(), w: r.f32()})
		}
		for _, list := range []*[]string{&e.terms.words, &e.terms.name} {
			nw := r.count(len(r.b))
			*list = make([]string, 0, nw)
			for range nw {
				*list = append(*list, word())
			}
		}
		entries = append(entries, e)
	}
	if r.err == nil && len(r.b) != n*dims*4 {
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	seen := make(map[string]bool, n)
	for _, e := range entries {
		if e.tool.ID == "" || seen[e.tool.ID] {
			return nil, errors.New("vectorindex: the index store names a tool twice")
		}
		seen[e.tool.ID] = true
		e.vec = make([]float32, dims)
		for j := range e.vec {
			e.vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*j:]))
		}
		r.b = r.b[4*dims:]
		if !validVector(e.vec, dims) {
			return nil, errors.New("vectorindex: the index store holds an invalid vector")
		}
	}
	return entries, nil
}

// storeReader reads the store's fields; the first error sticks and every
// later read returns zero values.
type storeReader struct {
	b   []byte
	err error
}

func (r *storeReader) fail() {
	if r.err == nil {
		r.err = errors.New("vectorindex: the index store is malformed")
	}
	r.b = nil
}

func (r *storeReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count is a uvarint that must be at most limit (what the rest of the file
// can hold, say), so that no length read from the file makes a huge
// allocation.
func (r *storeReader) count(limit int) int {
	v := r.uvarint()
	if v > uint64(max(limit, 0)) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *storeReader) bytes() []byte {
	v := r.uvarint()
	if v > uint64(len(r.b)) { // what is left after the length itself
		r.fail()
		return nil
	}
	n := int(v)
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *storeReader) str() string { return string(r.bytes()) }

func (r *storeReader) f32() float32 {
	if len(r.b) < 4 {
		r.fail()
		return 0
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendF32(b []byte, x float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
}

// readStore returns the entries persisted in dir and the embedder they
// were embedded by, or none when there is no usable file (missing, damaged,
// of another analyser): the index is a cache of the catalog, and the next
// Sync embeds what is missing. It needs no embedder, so that New can read
// the file while the embedder is built; the caller drops entries of
// another embedder than its own.
func readStore(dir string) (embedderID string, entries []*entry) {
	b, err := os.ReadFile(filepath.Join(dir, storeFile))
	if err != nil {
		return "", nil
	}
	r := &storeReader{b: b}
	if len(b) < len(storeMagic) || string(b[:len(storeMagic)]) != storeMagic {
		return "", nil
	}
	r.b = r.b[len(storeMagic):]
	r.uvarint() // the format, checked by decodeStore
	id := r.str()
	if r.err != nil {
		return "", nil
	}
	entries, err = decodeStore(b, id)
	if err != nil {
		return "", nil
	}
	return id, entries
}

// writeStore saves the entries to dir: to a temporary file first, then
// renamed over the old one, so a crash leaves the old file or the new one
// whole. Entries are written in id order, so that one catalog is one file.
func writeStore(dir, embedderID string, entries []*entry) error {
	dims := 0
	if len(entries) > 0 {
		dims = len(entries[0].vec)
	}
	sorted := append([]*entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].tool.ID < sorted[j].tool.ID })
	path := filepath.Join(dir, storeFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, encodeStore(embedderID, dims, sorted), 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("vectorindex: saving the index: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("vectorindex: saving the index: %w", err)
	}
	return nil
}
