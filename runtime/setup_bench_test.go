package runtime

import "testing"

// BenchmarkSetupBase is the fresh VM a worker builds for its next run while
// it waits (setupBase): goja.New, the captured built-ins, hardening, the
// families every VM has and the MCPToolError class. Under load its CPU is
// a quarter of a worker's.
func BenchmarkSetupBase(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ex := newExecution(nil, Limits{}, "")
		if err := ex.setupBase(); err != nil {
			b.Fatal(err)
		}
	}
}
