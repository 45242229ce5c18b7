// Package prestart starts worker processes for the runtime, and keeps one
// started early (StartEarly) for the runtime's pool to adopt (Take).
//
// A cold `sandbox run` is two Go processes, the CLI and its worker, and
// each spends most of its start in package initialisation (tens of
// milliseconds: the libraries of the gateway, tracing, Redis, schema
// validation). Started from main, the worker's initialisation follows the
// CLI's; started from an init that Go runs early (cmd/sandbox's
// earlyworker, which imports only this and the standard library; Go
// initialises ready packages in import-path order), the two overlap. One
// nobody takes dies with the CLI (its parent-death signal). Programs that
// only import the runtime start nothing early.
package prestart

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// WorkerEnv marks a process started as a worker. It is the only variable in
// a worker's environment: nothing of the parent's environment (API keys,
// tokens) is reachable from a worker, even through a VM escape.
const WorkerEnv = "SANDBOX_RUNTIME_WORKER"

// StderrKeep is how much of a worker's stderr is kept to explain a crash.
const StderrKeep = 8 << 10

// Process is a started worker process and its pipes.
type Process struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	Stderr *HeadBuffer
}

// Start starts command as a worker: in its own process group (a
// terminal's Ctrl-C is the parent's, which then ends its workers), killed
// when its parent dies, with nothing of the parent's environment.
func Start(command []string) (*Process, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = []string{WorkerEnv + "=1"}
	cmd.Dir = os.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, Stdin: stdin, Stdout: stdout, Stderr: &HeadBuffer{max: StderrKeep}}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

var (
	mu    sync.Mutex
	early *Process
	exe   string // early's executable
)

// StartEarly starts a worker of this executable for the runtime's pool to
// adopt, when this process is not itself a worker. Call it from an init.
func StartEarly() {
	if os.Getenv(WorkerEnv) != "" {
		return
	}
	path, err := os.Executable()
	if err != nil {
		return // the runtime says why when it starts its own
	}
	if p, err := Start([]string{path}); err == nil {
		mu.Lock()
		early, exe = p, path
		mu.Unlock()
	}
}

// Take returns the worker started early for command, once; nil when none
// was, or for another command.
func Take(command []string) *Process {
	mu.Lock()
	defer mu.Unlock()
	if early == nil || len(command) != 1 || command[0] != exe {
		return nil
	}
	p := early
	early = nil
	return p
}

// HeadBuffer keeps the first bytes written to it (a worker's stderr).
type HeadBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *HeadBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *HeadBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
