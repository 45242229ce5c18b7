package main

import (
	"github.com/sandboxrt/sandbox/vectorindex/internal/linalg"

	"math"
	"math/rand"
	"runtime"
	"sort"
	"sync"
)

// dense is a row-major matrix.
type dense struct {
	rows, cols int
	a          []float64
}

func newDense(r, c int) *dense       { return &dense{r, c, make([]float64, r*c)} }
func (d *dense) row(i int) []float64 { return d.a[i*d.cols : (i+1)*d.cols] }

// mul returns m times x (m.cols x l), rows split over the CPUs; each row is
// computed by one goroutine in a fixed order, so the result is reproducible.
func (m *csr) mul(x *dense) *dense {
	y := newDense(m.rows, x.cols)
	parallelRows(m.rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			yr := y.row(r)
			for k := m.off[r]; k < m.off[r+1]; k++ {
				v := m.val[k]
				xr := x.row(int(m.col[k]))
				for t := range yr {
					yr[t] += v * xr[t]
				}
			}
		}
	})
	return y
}

func parallelRows(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() { defer wg.Done(); fn(lo, hi) }()
	}
	wg.Wait()
}

// orthonormalize replaces the columns of d by an orthonormal basis of
// their span (modified Gram-Schmidt, twice for stability).
func orthonormalize(d *dense) {
	cols := make([][]float64, d.cols)
	for c := range cols {
		cols[c] = make([]float64, d.rows)
		for r := 0; r < d.rows; r++ {
			cols[c][r] = d.a[r*d.cols+c]
		}
	}
	for pass := 0; pass < 2; pass++ {
		for c := range cols {
			for p := 0; p < c; p++ {
				var s float64
				for r, x := range cols[c] {
					s += x * cols[p][r]
				}
				for r := range cols[c] {
					cols[c][r] -= s * cols[p][r]
				}
			}
			var n float64
			for _, x := range cols[c] {
				n += x * x
			}
			if n = math.Sqrt(n); n > 0 {
				for r := range cols[c] {
					cols[c][r] /= n
				}
			}
		}
	}
	for c := range cols {
		for r := 0; r < d.rows; r++ {
			d.a[r*d.cols+c] = cols[c][r]
		}
	}
}

// truncatedSVD returns the top k left singular vectors of m (rows x k) and
// the singular values, by randomized range finding (Halko, Martinsson and
// Tropp 2011) with power iterations, from a fixed seed.
func truncatedSVD(m *csr, k, oversample, iters int, seed int64) (*dense, []float64) {
	mt := m.transpose()
	l := k + oversample
	rng := rand.New(rand.NewSource(seed))
	omega := newDense(m.cols, l)
	for i := range omega.a {
		omega.a[i] = rng.NormFloat64()
	}
	q := m.mul(omega)
	orthonormalize(q)
	for it := 0; it < iters; it++ {
		z := mt.mul(q)
		orthonormalize(z)
		q = m.mul(z)
		orthonormalize(q)
	}
	bt := mt.mul(q) // (Q^T M)^T: cols x l
	c := make([][]float64, l)
	for i := range c {
		c[i] = make([]float64, l)
	}
	for r := 0; r < bt.rows; r++ {
		row := bt.row(r)
		for a := 0; a < l; a++ {
			if row[a] == 0 {
				continue
			}
			for b := a; b < l; b++ {
				c[a][b] += row[a] * row[b]
			}
		}
	}
	for a := 0; a < l; a++ {
		for b := 0; b < a; b++ {
			c[a][b] = c[b][a]
		}
	}
	evals, evecs := linalg.JacobiEigen(c)
	order := make([]int, l)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return evals[order[a]] > evals[order[b]] })
	u := newDense(m.rows, k)
	sigma := make([]float64, k)
	for t := 0; t < k; t++ {
		e := order[t]
		sigma[t] = math.Sqrt(math.Max(evals[e], 0))
		for r := 0; r < m.rows; r++ {
			qr := q.row(r)
			var s float64
			for a := 0; a < l; a++ {
				s += qr[a] * evecs[a][e]
			}
			u.a[r*k+t] = s
		}
	}
	return u, sigma
}
