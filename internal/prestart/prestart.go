// Package prestart starts worker processes for the runtime, and starts the
// first one of `sandbox run` while the program is still initialising.
//
// A cold `sandbox run` is two Go processes, the CLI and its worker, and
// each spends most of its start in package initialisation (tens of
// milliseconds: the libraries of the gateway, tracing, Redis, schema
// validation). Started from main, the worker's initialisation follows the
// CLI's; started from this package's init, which Go runs early (it imports
// only the standard library, and Go initialises ready packages in import
// path order), the two overlap. The runtime adopts the early worker when it
// starts its pool with the same executable (Take); one nobody takes dies
// with the CLI (its parent-death signal).
//
// Only `sandbox run` starts one early: it knows it will need exactly one
// worker, and the decision has to be made before main runs, from os.Args.
package prestart

import (
	"io"
	"os"
	"os/exec"
	"slices"
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

func init() {
	if !wantsEarlyWorker(os.Args, os.Getenv(WorkerEnv)) {
		return
	}
	path, err := os.Executable()
	if err != nil {
		return // the runtime says why when it starts its own
	}
	if p, err := Start([]string{path}); err == nil {
		early, exe = p, path
	}
}

// wantsEarlyWorker: `sandbox run` in workers (not --in-process), in a
// process that is not itself a worker.
func wantsEarlyWorker(args []string, workerEnv string) bool {
	return workerEnv == "" && len(args) > 1 && args[1] == "run" && !slices.Contains(args, "--in-process") &&
		!slices.Contains(args, "--help") && !slices.Contains(args, "-h")
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
