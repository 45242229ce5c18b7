// Package redistest runs a real redis-server (Debian's package) for tests,
// on a free loopback port. It persists what it acknowledges (an append-only
// file, fsynced at every write, in the test's temporary folder), as a
// production Redis whose data matters does, so a test can stop it as a
// crash would and find the acknowledged writes after Restart.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server the test started.
type Server struct {
	t    testing.TB
	Port int
	dir  string
	cmd  *exec.Cmd
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Start runs redis-server. Without one installed the test is skipped, with
// a message saying how to install it; .ci/run installs it and sets
// SANDBOX_REQUIRE_REDIS, which turns the skip into a failure.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		msg := "redis-server is not installed (Debian: apt-get install redis-server); .ci/run installs it"
		if os.Getenv("SANDBOX_REQUIRE_REDIS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{t: t, Port: port, dir: t.TempDir()}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Stop kills the server, as a crash would.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server (again) on its port, with what it had
// acknowledged before it stopped.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--dir", s.dir, "--protected-mode", "no")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Port) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("redis-server on port %d did not answer PING", s.Port)
}

func ping(port int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Contents is every key of the server and all it holds (members, fields
// and values, read by type: a DUMP compresses long strings, which would
// hide a plaintext from a search), one string per key, written with %q.
func (s *Server) Contents(t testing.TB) map[string]string {
	t.Helper()
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port)})
	defer raw.Close()
	keys, err := raw.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		var held any
		switch typ := raw.Type(ctx, k).Val(); typ {
		case "string":
			held = raw.Get(ctx, k).Val()
		case "hash":
			held = raw.HGetAll(ctx, k).Val()
		case "list":
			held = raw.LRange(ctx, k, 0, -1).Val()
		case "set":
			held = raw.SMembers(ctx, k).Val()
		case "zset":
			held = raw.ZRange(ctx, k, 0, -1).Val()
		default:
			t.Fatalf("%s is a %s, which Contents does not read", k, typ)
		}
		out[k] = fmt.Sprintf("%q", held)
	}
	return out
}

// Disk is every byte the server wrote to its folder (the append-only
// file), for a test that what reached the disk holds no plaintext.
func (s *Server) Disk(t testing.TB) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		all = append(all, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}
