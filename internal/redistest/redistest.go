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
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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
