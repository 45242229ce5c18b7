// Package testlog is a log that tests read while the code under test
// writes it from goroutines of its own.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer that many goroutines can share; String reads
// what was written so far.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
