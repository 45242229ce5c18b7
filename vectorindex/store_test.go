package vectorindex

import "bytes"

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
