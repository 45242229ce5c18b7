package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
	"time"
)

// nodeResolver reads JSON strings, one a line, and answers each with how
// Node.js reads it as a path: path.posix.resolve and path.win32.resolve
// against a root, of the string as it is, trimmed, NFKC-normalized and
// percent-decoded (once and twice); url.fileURLToPath of it as a file URL
// (POSIX and Windows); and the same for each line of a multi-line string.
const nodeResolver = `
const path = require('path'), url = require('url');
const rl = require('readline').createInterface({input: process.stdin, crlfDelay: Infinity});
const posixRoot = '/srv/data', winRoot = 'C:\\work';
rl.on('line', (line) => {
  const s = JSON.parse(line), out = [];
  const variants = [['as sent', s], ['trimmed', s.trim()], ['NFKC', s.normalize('NFKC')]];
  try { const d = decodeURIComponent(s); variants.push(['percent-decoded', d]);
        variants.push(['percent-decoded twice', decodeURIComponent(d)]); } catch {}
  const resolve = (how, input, isLine) => {
    out.push({how: how + ', path.posix.resolve', input, isLine, path: path.posix.resolve(posixRoot, input), win: false});
    out.push({how: how + ', path.win32.resolve', input, isLine, path: path.win32.resolve(winRoot, input), win: true});
    try {
      const u = new URL(input);
      if (u.protocol === 'file:') {
        try { out.push({how: how + ', url.fileURLToPath', input, isLine, path: url.fileURLToPath(u), win: false}); } catch {}
        try { out.push({how: how + ', url.fileURLToPath windows', input, isLine, path: url.fileURLToPath(u, {windows: true}), win: true}); } catch {}
      }
    } catch {}
  };
  for (const [how, v] of variants) {
    resolve(how, v, false);
    const lines = v.split(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/);
    if (lines.length > 1) for (const l of lines) if (l.trim() !== '') resolve(how + ', one line', l.trim(), true);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
});
`

// TestCheckPathsAgreesWithNode runs a few hundred tricky strings through
// Node's path.resolve and url.fileURLToPath and asserts that every string
// the check accepts resolves inside the roots in Node too. Lines of a
// multi-line string are held to the check's own rule: an absolute line is
// judged when it reads as a path (no spaces, not a // or /* comment).
// Skipped without node, unless SANDBOX_REQUIRE_PEERS is set.
func TestCheckPathsAgreesWithNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err == nil {
		err = exec.Command(node, "--version").Run()
	}
	if err != nil {
		if os.Getenv("SANDBOX_REQUIRE_PEERS") != "" {
			t.Fatalf("node is needed for this test (SANDBOX_REQUIRE_PEERS is set): %v", err)
		}
		t.Skipf("node not found (%v); set SANDBOX_REQUIRE_PEERS=1 to make this a failure", err)
	}
	inputs := nodeCorpus()
	if len(inputs) < 200 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	var stdin bytes.Buffer
	for _, s := range inputs {
		b, _ := json.Marshal(s)
		stdin.Write(b)
		stdin.WriteByte('\n')
	}
	cmd := exec.Command(node, "-e", nodeResolver)
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	// Each string is judged twice: with a POSIX root against Node's POSIX
	// readings, and with a Windows root against its Windows readings.
	posixRoots, winRoots := []string{"/srv/data"}, []string{`C:\work`}
	accepted, checked := 0, 0
	for i := 0; sc.Scan(); i++ {
		if i >= len(inputs) {
			t.Fatal("node answered more lines than it was sent")
		}
		var readings []struct {
			How, Input, Path string
			IsLine, Win      bool
		}
		if err := json.Unmarshal(sc.Bytes(), &readings); err != nil {
			t.Fatalf("node's answer for %q: %v", inputs[i], err)
		}
		s := inputs[i]
		okPosix, okWin := unsafePath(s, posixRoots) == "", unsafePath(s, winRoots) == ""
		if okPosix {
			accepted++
		}
		if okWin {
			accepted++
		}
		for _, r := range readings {
			if r.Win && !okWin || !r.Win && !okPosix {
				continue
			}
			resolved := r.Path
			switch judgedByNodeRule(r.Input, r.IsLine) {
			case skip:
				continue
			case folderOnly:
				resolved = r.Path[:max(strings.LastIndexAny(r.Path, `/\`), 0)]
			}
			checked++
			if !insideNodeRoots(resolved, r.Win) {
				roots := posixRoots
				if r.Win {
					roots = winRoots
				}
				t.Errorf("%q was accepted with roots %q, but Node reads it (%s of %q) as %q, outside", s, roots, r.How, r.Input, r.Path)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	t.Logf("%d strings judged twice (POSIX and Windows root), %d times accepted, %d Node readings of accepted strings checked", len(inputs), accepted, checked)
	if accepted < 50 || checked < 500 {
		t.Fatalf("too little was checked: %d accepted, %d readings", accepted, checked)
	}
}

type nodeRule int

const (
	skip       nodeRule = iota
	whole               // the resolved path must be inside
	folderOnly          // the folder of the resolved path must be inside
)

// judgedByNodeRule is the check's rule for strings with line breaks: such a
// reading, taken whole, is judged by its folder when that folder has no
// line break and is one a non-root user could have made; each of its lines
// (Node sends them separately) is judged when it reads as a path.
func judgedByNodeRule(input string, isLine bool) nodeRule {
	t := strings.TrimSpace(input)
	if !isLine {
		if strings.IndexFunc(t, isControl) < 0 {
			return whole
		}
		if i := strings.LastIndexAny(t, `/\`); i >= 0 && strings.IndexFunc(t[:i], isControl) < 0 {
			if abs, ok := absolutePath(t[:i+1]); ok && ordinaryFolder(abs) {
				return folderOnly
			}
		}
		return skip
	}
	if t == "" || strings.ContainsAny(t[:1], `/\~`) || len(t) > 1 && t[1] == ':' || hasFileScheme(t) {
		if !readsAsPath(t) {
			return skip
		}
	}
	return whole
}

func insideNodeRoots(p string, win bool) bool {
	in := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	if !win {
		return in(path.Clean(p), "/srv/data")
	}
	return in(strings.ToLower(strings.ReplaceAll(p, `\`, "/")), "c:/work")
}

// nodeCorpus builds the tricky strings: prefixes, dot and separator
// spellings, suffixes, combined; plus the review's bypasses and prose.
func nodeCorpus() []string {
	prefixes := []string{"", "/srv/data/", `C:\work\`, "/", "file://", "file:///srv/data/", "FILE:///srv/data/", "file:", "~/", `\\host\share\`, "C:"}
	dots := []string{"..", "%2e%2e", "%2E%2e", "%252e%252e", ".%2e", "&#46;&#46;", "&#46&#46", "&#046;&#046;", "&period;&period;",
		"\u2025", "\u2026", "\ufe19", "\ufe30", "\uff0e\uff0e", ".\u200b.", "%c0%ae%c0%ae", "...", ". .", "..;", "x", "."}
	seps := []string{"/", `\`, "%2f", "%5c", "\uff0f", "\u2215", "&sol;", "\n"}
	suffixes := []string{"", "\n", " ", "\t", "?q", "#f", "\x00"}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i, p := range prefixes {
		for j, d := range dots {
			sep := seps[(i+j)%len(seps)]
			suf := suffixes[(i*3+j)%len(suffixes)]
			add(p + d + sep + "etc" + sep + "passwd" + suf)
			add(p + d + sep + d + sep + "x" + suf)
			add(p + "a" + sep + d + sep + "b")
		}
	}
	// Benign names under each root spelling: these should be accepted.
	for _, p := range []string{"", "/srv/data/", `C:\work\`, "c:/work/", "file:///srv/data/", "FILE:///C:/work/", "file://localhost/srv/data/", "/srv/data/sub/"} {
		for _, n := range []string{"a.txt", "v1.2", "wait...", "x%20y", "a&amp;b", "caf\u00e9", "\uff41", "a..b", "..hidden", ".git/config", "%2e/x", "&#46;/x", "./x", "a/./b", "sub/../x"} {
			add(p + n)
		}
	}
	for _, s := range []string{
		"/etc/" + strings.Repeat("./", 2100) + "passwd", "/srv/data/" + strings.Repeat("./", 2100) + "x",
		"/etc/passwd\n", "/etc/passwd\r", "\n/etc/passwd", "/srv/data/x\n/etc/passwd", "/srv/data/x\r\n../../etc",
		"FILE:///etc/passwd", "File://localhost/etc/passwd", "fi\nle:///etc/passwd", "file:///srv/data/.\t./.\t./etc",
		"file:etc/passwd", "file:////etc/passwd", "file:///srv/data/..?x", "file:///srv/data/%2e%2e/x", "file:///C:/work/x",
		"file:///C:/Windows", "file:///c|/work/x", `C:\Windows`, "c:/work/../x", `C:..\x`, "D:secret", `\\?\C:\x`,
		"line 1\nline 2", "wait...", "v1.2", "wait\u2026 really", "see ../bar in the docs", "// c\npackage x\n",
		"/**\n * d\n */\nfunction f() {}", "~5 minutes", "~~~", "https://example.com/a/b", "100% sure", "caf\u00e9",
		"/srv/data/a\n/srv/data/b", "/srv/data", `C:\work`, "/srv/data/x.txt", `C:\work\x.txt`, "file:///srv/data/x",
		"/home/me/.config/autostart/a b\nc.desktop", "/srv/data/a b\nc.txt", "// c\nfoo()", "/* h */\nint x;", "~/a b\nc",
		"relative/ok.txt", "/srv/database", `C:\workshop`, "&amp; &lt;", "50% & more", "/srv/data/\uff41",
	} {
		add(s)
	}
	return out
}
