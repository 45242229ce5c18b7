package vectorindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// Test helpers: the store as bytes, and back (the index writes and reads
// files through encodeStoreTo and decodeStoreFrom).

// encodeStore is the file for these entries, all of the given dims.
func encodeStore(embedderID string, dims int, entries []*entry) []byte {
	var buf bytes.Buffer
	_ = encodeStoreTo(&buf, embedderID, analyzerVersion, dims, entries) // a bytes.Buffer does not fail
	return buf.Bytes()
}

// decodeStore reads a file written by encodeStore for this embedder.
func decodeStore(b []byte, embedderID string) ([]*entry, error) {
	p, err := decodeStoreFrom(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	if p.embedderID != embedderID || p.analyzer != analyzerVersion {
		return nil, errStaleStore
	}
	return p.entries, nil
}

// encodeStoreV1 writes entries in the store's format 1 (before output
// schemas, annotations, server instructions and enum value terms were
// kept), as an index of that version wrote them.
func encodeStoreV1(embedderID, analyzer string, dims int, entries []*entry) []byte {
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
		for _, l := range [][]string{e.terms.words, e.terms.name} {
			for _, w := range l {
				intern(w)
			}
		}
	}
	b := []byte(storeMagic)
	b = binary.AppendUvarint(b, 1)
	b = appendStr(b, embedderID)
	b = appendStr(b, analyzer)
	b = binary.AppendUvarint(b, uint64(dims))
	b = binary.AppendUvarint(b, uint64(len(entries)))
	b = binary.AppendUvarint(b, uint64(len(table)))
	for _, s := range table {
		b = appendStr(b, s)
	}
	for _, e := range entries {
		t := e.tool
		for _, s := range []string{t.ID, e.hash, t.Server, t.Name, t.Title, t.Description, string(t.InputSchema)} {
			b = appendStr(b, s)
		}
		b = appendF32(b, e.terms.length)
		b = binary.AppendUvarint(b, uint64(len(e.terms.terms)))
		for _, w := range e.terms.terms {
			b = binary.AppendUvarint(b, ids[w.term])
			b = appendF32(b, w.w)
		}
		for _, l := range [][]string{e.terms.words, e.terms.name} {
			b = binary.AppendUvarint(b, uint64(len(l)))
			for _, w := range l {
				b = binary.AppendUvarint(b, ids[w])
			}
		}
	}
	for _, e := range entries {
		for _, x := range e.vec {
			b = appendF32(b, x)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// TestStoreOfFormat1IsRead: an index directory written before output
// schemas, annotations and instructions were indexed is read (its tools
// searchable at once, analysed again), and the next Sync embeds again only
// the tools whose definitions now carry those (their hash changed), not
// the others.
func TestStoreOfFormat1IsRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cat := smallCatalog()
	ix := mustIndex(t, Options{}, cat)
	old := ix.state.Load().entries
	a := defaultAnalyzer()
	for _, e := range old {
		e.terms = a.analyzeDoc(e.tool) // whatever terms-v1 made; read again anyway
	}
	if err := os.WriteFile(filepath.Join(dir, storeFile), encodeStoreV1(ix.emb.id(), "terms-v1", len(old[0].vec), old), 0o600); err != nil {
		t.Fatal(err)
	}
	emb := &countingEmbedder{embedder: newBuiltinEmbedder()}
	ix2, err := newIndex(dir, emb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ix2.Len() != len(cat) {
		t.Fatalf("read %d tools of a format-1 store, want %d", ix2.Len(), len(cat))
	}
	if got := searchIDs(t, ix2, "take a screenshot of the page", 1); got[0] != "playwright:browser_take_screenshot" {
		t.Errorf("search after reading a format-1 store: %v", got)
	}
	// the same catalog, two tools now with an output schema and annotations
	now := smallCatalog()
	now[0].OutputSchema = json.RawMessage(`{"type":"object","properties":{"commits":{"type":"array"}}}`)
	now[1].Annotations = json.RawMessage(`{"readOnlyHint":false}`)
	st, err := ix2.Sync(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Updated != 2 || st.Unchanged != len(cat)-2 || emb.tools.Load() != 2 {
		t.Errorf("Sync after a format-1 store: %+v, %d embedded; want the 2 changed tools only", st, emb.tools.Load())
	}
	// and the file is now of this format, with the new fields
	b, err := os.ReadFile(filepath.Join(dir, storeFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeStore(b, ix2.emb.id())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if e.tool.ID == "github:list_commits" && len(e.tool.OutputSchema) == 0 {
			t.Error("the output schema was not saved")
		}
	}
}

// TestHashOfAToolWithoutNewFieldsIsUnchanged: a tool without output schema,
// annotations or instructions hashes as before they were indexed, so its
// persisted vector (maybe paid for) is kept.
func TestHashOfAToolWithoutNewFieldsIsUnchanged(t *testing.T) {
	tool, _ := smallCatalog()[0].normalized()
	h := sha256.New()
	for _, s := range []string{tool.ID, tool.Server, tool.Name, tool.Title, tool.Description} {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, tool.InputSchema)
	h.Write(buf.Bytes())
	if want := hex.EncodeToString(h.Sum(nil)); tool.hash() != want {
		t.Errorf("hash %s, want the earlier %s", tool.hash(), want)
	}
	for _, changed := range []Tool{
		{ID: tool.ID, OutputSchema: json.RawMessage(`{}`)},
		{ID: tool.ID, Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{ID: tool.ID, ServerInstructions: "about"},
	} {
		c := tool
		c.OutputSchema, c.Annotations, c.ServerInstructions = changed.OutputSchema, changed.Annotations, changed.ServerInstructions
		if c.hash() == tool.hash() || c.same(tool) {
			t.Errorf("%+v: a new field does not change the definition", changed)
		}
	}
}
