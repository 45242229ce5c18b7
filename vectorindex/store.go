package vectorindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/sandboxrt/sandbox/internal/atomicfile"
)

// The persisted index is one file of our own format, storeFile: the tools,
// their vectors and their analysed terms. It is read at start and written
// after each change (aside, then renamed), a piece at a time both ways.
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
//	            schema, output schema, annotations, server instructions;
//	            f32 length; uvarint n then n × (uvarint string, f32 weight)
//	            terms; then uvarint n and n × uvarint string for each of
//	            words, name words and enum value terms
//
// Format 1 (before output schemas, annotations and instructions were kept)
// lacks the three strings after the schema and the enum value terms; it is
// read as tools without them, analysed by an older analyser (so analysed
// again at once).
//
//	vectors     per tool, dims × f32
//	crc         u32, CRC-32C of everything before it
const (
	storeFile   = "index.bin"
	storeMagic  = "sandbox-vectorindex\n"
	storeFormat = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeStoreTo writes the file for these entries to w, a piece at a time:
// at 10,000 tools the file is ~40 MB, which built whole in memory (and
// grown by doubling) was most of a cold start's peak memory beyond the
// index itself.
func encodeStoreTo(w io.Writer, embedderID, analyzer string, dims int, entries []*entry) error {
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
	for _, e := range entries {
		for _, w := range e.terms.terms {
			intern(w.term)
		}
		for _, list := range [][]string{e.terms.words, e.terms.name, e.terms.values} {
			for _, w := range list {
				intern(w)
			}
		}
	}
	cw := &crcWriter{w: bufio.NewWriterSize(w, 256<<10)}
	b := []byte(storeMagic)
	b = binary.AppendUvarint(b, storeFormat)
	b = appendStr(b, embedderID)
	b = appendStr(b, analyzer)
	b = binary.AppendUvarint(b, uint64(dims))
	b = binary.AppendUvarint(b, uint64(len(entries)))
	b = binary.AppendUvarint(b, uint64(len(table)))
	for _, s := range table {
		b = appendStr(b, s)
	}
	cw.write(b)
	for _, e := range entries {
		t := e.tool
		b = b[:0]
		for _, s := range []string{t.ID, e.hash, t.Server, t.Name, t.Title, t.Description} {
			b = appendStr(b, s)
		}
		for _, raw := range [][]byte{t.InputSchema, t.OutputSchema, t.Annotations, []byte(t.ServerInstructions)} {
			b = binary.AppendUvarint(b, uint64(len(raw)))
			b = append(b, raw...)
		}
		b = appendF32(b, e.terms.length)
		b = binary.AppendUvarint(b, uint64(len(e.terms.terms)))
		for _, w := range e.terms.terms {
			b = binary.AppendUvarint(b, ids[w.term])
			b = appendF32(b, w.w)
		}
		for _, list := range [][]string{e.terms.words, e.terms.name, e.terms.values} {
			b = binary.AppendUvarint(b, uint64(len(list)))
			for _, w := range list {
				b = binary.AppendUvarint(b, ids[w])
			}
		}
		cw.write(b)
	}
	for _, e := range entries {
		b = b[:0]
		for _, x := range e.vec {
			b = appendF32(b, x)
		}
		cw.write(b)
	}
	b = binary.LittleEndian.AppendUint32(b[:0], cw.crc)
	if _, err := cw.w.Write(b); err != nil {
		return err
	}
	if cw.err != nil {
		return cw.err
	}
	return cw.w.Flush()
}

// crcWriter writes to w and keeps the CRC-32C of what it wrote; the first
// error sticks.
type crcWriter struct {
	w   *bufio.Writer
	crc uint32
	err error
}

func (c *crcWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	c.crc = crc32.Update(c.crc, castagnoli, b)
	_, c.err = c.w.Write(b)
}

// errStaleStore is a store file that is whole but not usable as it is: of
// another embedder (its vectors are of another space) or analyser (its
// terms must be made again).
var errStaleStore = errors.New("vectorindex: the store was written for another embedder or analyser")

// decodeStoreFrom reads a store of size bytes from src, a piece at a time
// (the file need not be in memory whole: ~40 MB at 10,000 tools), and says
// which embedder and analyser made it. It trusts nothing in it: every
// length is checked against what is left of the file and capacities taken
// from it are capped, so a damaged file is an error, never a panic or a
// large allocation. The checksum is checked at the end, over everything
// read. (A file crafted with a right checksum can still hold whatever it
// likes; the directory is the operator's, 0700.)
func decodeStoreFrom(src io.Reader, size int64) (p persisted, err error) {
	if size < int64(len(storeMagic))+4 {
		return persisted{}, errors.New("vectorindex: not an index store")
	}
	cr := &crcReader{r: io.LimitReader(src, size-4)}
	r := &storeReader{r: bufio.NewReaderSize(cr, 256<<10), left: int(size - 4)}
	if string(r.read(len(storeMagic))) != storeMagic {
		return persisted{}, errors.New("vectorindex: not an index store")
	}
	format := r.uvarint()
	if format != 1 && format != storeFormat {
		return persisted{}, errStaleStore
	}
	p.embedderID, p.analyzer = r.str(), r.str()
	dims, n, nstr := r.count(1<<16), r.count(r.left), r.count(r.left)
	if r.err == nil && n > 0 && dims == 0 {
		r.fail()
	}
	// Counts are read before the checksum is: capacities are capped, and
	// what is allocated beyond grows with what is actually read.
	table := make([]string, 0, min(nstr, 1<<16))
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
	// A tool takes at least 14 bytes of the file.
	entries := make([]*entry, 0, min(n, r.left/14))
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
		if format >= 2 {
			if s := r.bytes(); len(s) > 0 {
				e.tool.OutputSchema = append([]byte(nil), s...)
			}
			if s := r.bytes(); len(s) > 0 {
				e.tool.Annotations = append([]byte(nil), s...)
			}
			e.tool.ServerInstructions = r.str()
		}
		e.terms.length = r.f32()
		nt := r.count(r.left)
		e.terms.terms = make([]weighted, 0, min(nt, 1024))
		for range nt {
			e.terms.terms = append(e.terms.terms, weighted{term: word(), w: r.f32()})
		}
		lists := []*[]string{&e.terms.words, &e.terms.name, &e.terms.values}
		if format < 2 {
			lists = lists[:2]
		}
		for _, list := range lists {
			nw := r.count(r.left)
			if nw == 0 {
				continue // nil, as analyzeDoc leaves an empty list
			}
			*list = make([]string, 0, min(nw, 1024))
			for range nw {
				*list = append(*list, word())
			}
		}
		entries = append(entries, e)
	}
	if r.err == nil && r.left != n*dims*4 {
		r.fail()
	}
	seen := make(map[string]bool, n)
	for _, e := range entries {
		if r.err != nil {
			break
		}
		if e.tool.ID == "" || seen[e.tool.ID] {
			return persisted{}, errors.New("vectorindex: the index store names a tool twice")
		}
		seen[e.tool.ID] = true
		raw := r.read(4 * dims)
		if r.err != nil {
			break
		}
		e.vec = make([]float32, dims)
		for j := range e.vec {
			e.vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		if !validVector(e.vec, dims) {
			return persisted{}, errors.New("vectorindex: the index store holds an invalid vector")
		}
	}
	if r.err != nil {
		return persisted{}, r.err
	}
	var sum [4]byte
	if _, err := io.ReadFull(src, sum[:]); err != nil || cr.crc != binary.LittleEndian.Uint32(sum[:]) {
		return persisted{}, errors.New("vectorindex: the index store is damaged (checksum)")
	}
	p.entries = entries
	return p, nil
}

// crcReader keeps the CRC-32C of what is read through it.
type crcReader struct {
	r   io.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	return n, err
}

// storeReader reads the store's fields; the first error sticks and every
// later read returns zero values.
type storeReader struct {
	r       *bufio.Reader
	left    int // bytes of the store not read yet (the checksum aside)
	scratch []byte
	err     error
}

func (r *storeReader) fail() {
	if r.err == nil {
		r.err = errors.New("vectorindex: the index store is malformed")
	}
	r.left = 0
}

func (r *storeReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r) // an error for a varint past 64 bits, too
	if err != nil {
		r.fail()
		return 0
	}
	return v
}

// ReadByte is for binary.ReadUvarint: it reads within the store's bytes.
func (r *storeReader) ReadByte() (byte, error) {
	if r.left <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	c, err := r.r.ReadByte()
	if err == nil {
		r.left--
	}
	return c, err
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

// read returns the next n bytes, valid until the next read.
func (r *storeReader) read(n int) []byte {
	if r.err != nil || n > r.left {
		r.fail()
		return nil
	}
	if cap(r.scratch) < n {
		r.scratch = make([]byte, n)
	}
	b := r.scratch[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.fail()
		return nil
	}
	r.left -= n
	return b
}

// bytes reads a length, then that many bytes (valid until the next read).
func (r *storeReader) bytes() []byte {
	v := r.uvarint()
	if v > uint64(r.left) { // what is left after the length itself
		r.fail()
		return nil
	}
	return r.read(int(v))
}

func (r *storeReader) str() string { return string(r.bytes()) }

func (r *storeReader) f32() float32 {
	b := r.read(4)
	if b == nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendF32(b []byte, x float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
}

// readStore returns the entries persisted in dir with the embedder and
// analyser that made them, or none when there is no usable file (missing,
// damaged): the index is a cache of the catalog, and the next Sync embeds
// what is missing. It needs no embedder, so that New can read the file
// while the embedder is built; the caller drops entries of another
// embedder than its own, and analyses again those of another analyser.
func readStore(dir string) persisted {
	f, err := os.Open(filepath.Join(dir, storeFile))
	if err != nil {
		return persisted{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return persisted{}
	}
	p, err := decodeStoreFrom(f, st.Size())
	if err != nil {
		return persisted{}
	}
	return p
}

// writeStore saves the entries to dir: to a temporary file of its own first
// (two processes sharing the directory never write the same one), then
// renamed over the old one, so a crash leaves the old file or the new one
// whole. Entries are written in id order, so that one catalog is one file.
func writeStore(dir, embedderID string, entries []*entry) error {
	dims := 0
	if len(entries) > 0 {
		dims = len(entries[0].vec)
	}
	sorted := append([]*entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].tool.ID < sorted[j].tool.ID })
	err := atomicfile.WriteFunc(filepath.Join(dir, storeFile), 0o600, func(w io.Writer) error {
		return encodeStoreTo(w, embedderID, analyzerVersion, dims, sorted)
	})
	if err != nil {
		return fmt.Errorf("vectorindex: saving the index: %w", err)
	}
	return nil
}
