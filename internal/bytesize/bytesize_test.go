package bytesize

import (
	"errors"
	"testing"
)

func TestFormatReadsBackAsTheSameSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{
		0: "0B", 100: "100B", 1024: "1KiB", 1536: "1536B" /* not whole KiB */, 3 << 10: "3KiB",
		1 << 20: "1MiB", 1536 << 10: "1536KiB", 256 << 20: "256MiB", 1 << 30: "1GiB", 5 << 30: "5GiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
		if n > 0 {
			if back, err := Parse(Format(n)); err != nil || back != n {
				t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
			}
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{
		"256MiB": 256 << 20, "256mb": 256 << 20, " 64 KiB ": 64 << 10, "1g": 1 << 30, "0.5MiB": 512 << 10, "100": 100, "7b": 7,
	} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "MiB", "-1MiB", "0", "ten", "1e20GiB", "NaN", "inf", "-infKiB"} {
		if _, err := Parse(s); !errors.Is(err, ErrNotASize) {
			t.Errorf("Parse(%q) = %v, want ErrNotASize", s, err)
		}
	}
}
