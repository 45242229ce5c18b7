// Package bytesize writes and reads sizes the way the CLI's flags and the
// runtime's messages spell them: 256MiB, 64KiB, 1GiB.
package bytesize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Format writes n in the largest binary unit that divides it exactly, so
// that what is printed reads back as the same number: 256MiB, 1536KiB, 100B.
func Format(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// ErrNotASize is what Parse returns for text that is not a positive size.
var ErrNotASize = errors.New("not a size; use a positive number with a unit, e.g. 256MiB, 64KiB")

// Parse reads a positive size: a number (fractions allowed) with an
// optional unit, binary whatever its spelling (KiB, KB, K and k are all
// 1024 bytes; no unit is bytes), up to 1 PiB.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			mult = u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || !(n > 0 && n*float64(mult) <= 1<<50) { // written so that NaN fails too
		return 0, ErrNotASize
	}
	return int64(n * float64(mult)), nil
}
