package deploy_test

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// containerEngine returns the CLI of a container engine that answers
// (docker, else podman), or why there is none. A docker client with no
// daemon behind it is no engine.
func containerEngine() (string, string) {
	var why []string
	for _, cli := range []string{"docker", "podman"} {
		path, err := exec.LookPath(cli)
		if err != nil {
			why = append(why, cli+": not installed")
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, path, "info", "--format", "{{.ServerVersion}}").CombinedOutput()
		cancel()
		if err == nil {
			return path, ""
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		why = append(why, cli+" info: "+line)
	}
	return "", strings.Join(why, "; ")
}

// TestContainerImageStarts builds the image of the Dockerfile and runs it
// as its quick start says (docs/deploy.md): it turns healthy by its own
// HEALTHCHECK, reports the version it was built with, refuses a request
// without the API key and serves one with it. Where no container engine
// runs, it skips saying why; TestDockerfileCommandServes (cmd/sandbox) runs
// the same command line without one.
func TestContainerImageStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image")
	}
	engine, why := containerEngine()
	if engine == "" {
		t.Skip("no container engine answers here (" + why + ")")
	}
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		cmd := exec.Command(engine, args...)
		cmd.Dir = testpeers.RepoRoot(t)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", engine, strings.Join(args, " "), err, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	const image, version, key = "sandbox-test:quickstart", "v0.0.0-containertest", "container-test-key-0123456789"
	run("build", "--build-arg", "VERSION="+version, "-t", image, ".")
	t.Cleanup(func() { _ = exec.Command(engine, "rmi", "-f", image).Run() })

	id := run("run", "-d", "-p", "127.0.0.1::8808", "-e", "SANDBOX_AGENT_KEY="+key, image)
	t.Cleanup(func() { _ = exec.Command(engine, "rm", "-f", id).Run() })

	if v := run("run", "--rm", "--entrypoint", "/usr/local/bin/sandbox", image, "--version"); !strings.HasPrefix(v, "sandbox "+version) {
		t.Errorf("--version in the image: %q", v)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		status := run("inspect", "--format", "{{.State.Health.Status}}", id)
		if status == "healthy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container is %s after 90 s; its log:\n%s", status, run("logs", id))
		}
		time.Sleep(2 * time.Second)
	}
	hostPort := run("port", id, "8808/tcp")
	hostPort, _, _ = strings.Cut(hostPort, "\n")
	for authorization, want := range map[string]int{"": http.StatusUnauthorized, "Bearer " + key: http.StatusOK} {
		req, _ := http.NewRequest("POST", "http://"+hostPort+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("authorization %q: %d, want %d", authorization, resp.StatusCode, want)
		}
	}
}
