package binfile

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestReadsWhatWasWritten(t *testing.T) {
	var b []byte
	b = append(b, "MAGIC"...)
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendUvarint(b, 3)
	b = append(b, 'x', 'y', 'z', 7)
	r, err := Open(b, "MAGIC")
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Uvarint(); v != 300 {
		t.Errorf("Uvarint = %d", v)
	}
	if n := r.Count(); n != 3 || string(r.Bytes(n)) != "xyz" || r.Byte() != 7 || r.Len() != 0 || r.Err != nil {
		t.Errorf("n=%d err=%v", n, r.Err)
	}
}

func TestCorruptInputIsAnErrorNotAnAllocation(t *testing.T) {
	huge := binary.AppendUvarint(nil, 1<<30) // a count no data backs
	r := NewReader(huge)
	if n := r.Count(); n != 0 || r.Err == nil {
		t.Errorf("Count = %d, err %v", n, r.Err)
	}
	if r.Bytes(5) != nil || r.Byte() != 0 || r.Uvarint() != 0 {
		t.Error("reads after an error must return zero values")
	}
	r = NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	if r.Uvarint(); r.Err == nil {
		t.Error("an unterminated varint must fail")
	}
	for _, data := range []string{"OTHER", "MAGI", ""} {
		if _, err := Open([]byte(data), "MAGIC"); err == nil || !strings.Contains(err.Error(), "magic") {
			t.Errorf("%q: wrong magic: %v", data, err)
		}
	}
}
