// Package deploy_test checks the Helm chart with the real helm CLI (from
// the Go module proxy, pinned): it lints, it renders, and the gateway
// config it renders is one sandbox accepts.
package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/config"
)

// helmVersion is the helm CLI the chart is checked with.
const helmVersion = "helm.sh/helm/v3/cmd/helm@v3.22.0"

func helm(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", helmVersion}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// chartEnv turns TestHelmChart on. Compiling the helm CLI (Kubernetes'
// client libraries) took most of a first `make test` on 2 cores, for a
// test of packaging that only a chart change can break: `make test-chart`
// sets it, and .ci/run runs that target too.
const chartEnv = "SANDBOX_TEST_CHART"

func TestHelmChart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helm CLI")
	}
	if os.Getenv(chartEnv) == "" {
		t.Skip("compiles the pinned helm CLI (minutes on a fresh machine): run `make test-chart` (" + chartEnv + "=1)")
	}
	chart := filepath.Join("helm", "sandbox")
	if out := helm(t, "lint", "--strict", chart); !strings.Contains(out, "0 chart(s) failed") {
		t.Fatalf("helm lint:\n%s", out)
	}
	for name, sets := range map[string][]string{
		"bundled redis":  {"--set", "secret.values.SANDBOX_AGENT_KEY=agent-key-0123456789"},
		"external redis": {"--set", "redis.url=redis://redis.example:6379/0", "--set", "secret.existingSecret=keys"},
		"no redis":       {"--set", "redis.enabled=false", "--set", "autoscaling.enabled=false", "--set", "replicaCount=1"},
	} {
		t.Run(name, func(t *testing.T) {
			out := helm(t, append([]string{"template", "t", chart}, sets...)...)
			for _, want := range []string{"kind: Deployment", "kind: Service", "path: /readyz", "path: /healthz", "runAsNonRoot: true"} {
				if !strings.Contains(out, want) {
					t.Errorf("the rendered chart lacks %q", want)
				}
			}
			if hasRedis := strings.Contains(out, "SANDBOX_REDIS_URL"); hasRedis == (name == "no redis") {
				t.Errorf("SANDBOX_REDIS_URL set: %v", hasRedis)
			}
			if strings.Contains(out, "kind: HorizontalPodAutoscaler") == (name == "no redis") {
				t.Error("the autoscaler does not follow autoscaling.enabled")
			}
			// The config the pods read is one sandbox accepts.
			t.Setenv("SANDBOX_AGENT_KEY", "agent-key-0123456789")
			t.Setenv("SANDBOX_REDIS_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
			t.Setenv("SANDBOX_REDIS_URL", "redis://redis:6379/0")
			file, err := config.Parse("mcp.json", []byte(renderedConfig(t, out)))
			if err != nil {
				t.Fatalf("the rendered mcp.json: %v", err)
			}
			if (file.Redis != nil) == (name == "no redis") || len(file.Auth.APIKeys) != 1 {
				t.Errorf("redis %+v, api keys %d", file.Redis, len(file.Auth.APIKeys))
			}
		})
	}
}

// renderedConfig is the mcp.json of the rendered ConfigMap.
func renderedConfig(t *testing.T, rendered string) string {
	t.Helper()
	_, after, ok := strings.Cut(rendered, "  mcp.json: |\n")
	if !ok {
		t.Fatal("no mcp.json in the rendered chart")
	}
	var b strings.Builder
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		b.WriteString(strings.TrimPrefix(line, "    ") + "\n")
	}
	return b.String()
}
