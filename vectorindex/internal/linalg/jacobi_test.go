package linalg

import (
	"math"
	"testing"
)

// TestJacobiEigen checks A·v = λ·v for every pair, on a matrix whose
// eigenvalues are known.
func TestJacobiEigen(t *testing.T) {
	a := [][]float64{{4, 1, 2}, {1, 3, 0}, {2, 0, 5}}
	orig := [][]float64{{4, 1, 2}, {1, 3, 0}, {2, 0, 5}}
	vals, vecs := JacobiEigen(a)
	sum := 0.0
	for k, lambda := range vals {
		sum += lambda
		for i := 0; i < 3; i++ {
			av := 0.0
			for j := 0; j < 3; j++ {
				av += orig[i][j] * vecs[j][k]
			}
			if math.Abs(av-lambda*vecs[i][k]) > 1e-9 {
				t.Fatalf("eigenpair %d: (A v)[%d] = %g, λ v[%d] = %g", k, i, av, i, lambda*vecs[i][k])
			}
		}
	}
	if math.Abs(sum-12) > 1e-9 { // the trace
		t.Errorf("eigenvalues sum to %g, want the trace 12", sum)
	}
}
