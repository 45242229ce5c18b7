package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corpusHandler is an MCP server over streamable HTTP holding every tool
// of the corpus, named "<server>_<tool>". It answers from bytes prepared in
// advance (JSON, no SSE), so that the upstreams' own work hardly shares the
// machine with what is measured, serve's.
func corpusHandler(b *testing.B, corpus string) (h http.Handler, tools int) {
	data, err := os.ReadFile(corpus)
	if err != nil {
		b.Fatal(err)
	}
	var defs []map[string]any
	if err := json.Unmarshal(data, &defs); err != nil {
		b.Fatal(err)
	}
	for _, t := range defs {
		t["name"] = fmt.Sprint(t["server"], "_", t["name"])
		delete(t, "server")
		delete(t, "source")
	}
	list, err := json.Marshal(map[string]any{"tools": defs})
	if err != nil {
		b.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "POST JSON-RPC", http.StatusMethodNotAllowed)
			return
		}
		var result []byte
		switch req.Method {
		case "initialize":
			result = []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"corpus","version":"1"}}`)
		case "tools/list":
			result = list
		case "ping":
			result = []byte(`{}`)
		default:
			if len(req.ID) == 0 { // a notification
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not here"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}), len(defs)
}

// BenchmarkServeLargeCatalog is issue 15's large-catalog measurement as an
// operator meets it: `sandbox serve` (the real binary, its own process) over
// 30 upstreams of the 341-tool corpus each (10,230 tools; streamable HTTP
// servers in this process answering from prepared bytes, already running,
// so that what is timed is serve's start, not the upstreams'), with a
// persisted index directory: empty (cold), then as the first start left it
// (warm). Reported: milliseconds from exec until serve listens (it listens
// once every server is listed and the index synced) and /readyz answers
// 200, the CPU time serve used until then (work removed shows there even
// when the two cores hide it from the wall clock), and serve's peak and
// settled RSS (its workers and upstreams are other processes). Targets:
// ready in < 5 s cold and < 1 s warm, < 300 MB.
func BenchmarkServeLargeCatalog(b *testing.B) {
	corpus, err := filepath.Abs(corpusPath)
	if err != nil {
		b.Fatal(err)
	}
	const copies = 30
	mux := http.NewServeMux()
	servers := map[string]any{}
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	want := 0
	for i := range copies {
		path := fmt.Sprintf("/corpus%02d/mcp", i)
		h, n := corpusHandler(b, corpus)
		mux.Handle(path, h)
		want += n
		servers[fmt.Sprintf("corpus%02d", i)] = map[string]any{"url": srv.URL + path}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	config := writeConfig(b, string(cfg))
	indexDir := b.TempDir()
	bin := sandboxBinary(b)
	for _, phase := range []string{"cold", "warm"} {
		b.Run(fmt.Sprintf("tools=%d/%s", want, phase), func(b *testing.B) {
			var ready, cpu, peak, settled float64
			for b.Loop() {
				if phase == "cold" {
					b.StopTimer()
					os.RemoveAll(indexDir)
					b.StartTimer()
				}
				ready, cpu, peak, settled = startLargeServe(b, bin, config, indexDir, want)
			}
			b.ReportMetric(ready, "ms/ready")
			b.ReportMetric(cpu, "cpu-ms/ready")
			b.ReportMetric(peak, "MiB-peak-rss")
			b.ReportMetric(settled, "MiB-rss-ready")
		})
	}
}

// startLargeServe starts serve, waits until it listens and is ready, reads
// its memory, and stops it.
func startLargeServe(b *testing.B, bin, config, indexDir string, want int) (readyMs, cpuMs, peakMiB, rssMiB float64) {
	cmd := exec.Command(bin, "serve", "-c", config, "--http", "127.0.0.1:0", "--log-level", "info", "--log-format", "json", "--index-dir", indexDir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer stopProcess(cmd, 20*time.Second)
	// A serve that never says it listens is stopped after a minute (the
	// scan below then ends).
	hung := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer hung.Stop()
	url := ""
	var seen []string
	tools := 0
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
		var rec struct {
			Msg   string `json:"msg"`
			Tools int    `json:"tools"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "server" {
			tools += rec.Tools
		}
		if len(seen) < 50 {
			seen = append(seen, sc.Text())
		}
	}
	if url == "" {
		b.Fatalf("serve exited before listening:\n%s", strings.Join(seen, "\n"))
	}
	if tools != want {
		b.Fatalf("serve listed %d tools, want %d:\n%s", tools, want, strings.Join(seen, "\n"))
	}
	go func() {
		for sc.Scan() {
		}
	}()
	readyURL := strings.TrimSuffix(url, "/mcp") + "/readyz"
	for {
		res, err := http.Get(readyURL)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(t0) > time.Minute {
			b.Fatalf("serve not ready after a minute: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	readyMs = float64(time.Since(t0).Microseconds()) / 1000
	cpuMs = cpuMillis(b, cmd.Process.Pid)
	peakMiB = float64(statusKB(b, cmd.Process.Pid, "VmHWM")) / 1024
	rssMiB = float64(statusKB(b, cmd.Process.Pid, "VmRSS")) / 1024
	return readyMs, cpuMs, peakMiB, rssMiB
}
