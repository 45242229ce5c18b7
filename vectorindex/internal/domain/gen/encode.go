package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"
)

// Format (integers are unsigned varints), read by ../domain.go:
//
//	magic "SBXDOM1\n"
//	dims, nWords
//	each word front-coded against the previous (sorted bytewise):
//	    sharedPrefixLen, suffixLen, suffix bytes
//	each word's frequency rank byte: round(16*log2(1+count)) capped at 255
//	each word's vector: dims int8, the unit vector scaled so that its
//	    largest component is +-127
const magic = "SBXDOM1\n"

func encode(vocab []string, vecs [][]float64, counts []float64, dims int) []byte {
	order := make([]int, len(vocab))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return vocab[order[a]] < vocab[order[b]] })
	var b bytes.Buffer
	b.WriteString(magic)
	uv := func(x int) { b.Write(binary.AppendUvarint(nil, uint64(x))) }
	uv(dims)
	uv(len(vocab))
	prev := ""
	for _, i := range order {
		w := vocab[i]
		p := 0
		for p < len(w) && p < len(prev) && w[p] == prev[p] {
			p++
		}
		uv(p)
		uv(len(w) - p)
		b.WriteString(w[p:])
		prev = w
	}
	for _, i := range order {
		b.WriteByte(byte(min(255, math.Round(16*math.Log2(1+counts[i])))))
	}
	for _, i := range order {
		var mx float64
		for _, x := range vecs[i] {
			mx = math.Max(mx, math.Abs(x))
		}
		for _, x := range vecs[i] {
			q := 0.0
			if mx > 0 {
				q = math.Round(x / mx * 127)
			}
			b.WriteByte(byte(int8(q)))
		}
	}
	return b.Bytes()
}
