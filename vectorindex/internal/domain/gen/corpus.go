package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// A corpus is a sequence of paragraphs; words co-occur only within one.
// Each reader calls emit once per paragraph, in a fixed order, so that the
// counts (and the output) do not depend on map order or the file system.

// dedup drops paragraphs seen before (Debian repeats one description for a
// package's -dev, -doc and -data siblings; man pages repeat boilerplate),
// so that repetition does not pass for association.
type dedup map[[32]byte]bool

func (d dedup) fresh(s string) bool {
	k := sha256.Sum256([]byte(strings.Join(strings.Fields(strings.ToLower(s)), " ")))
	if d[k] {
		return false
	}
	d[k] = true
	return true
}

// translationIndex finds apt's English package-description index for one
// suite and component in an apt lists directory (apt fetches it when
// Acquire::Languages includes "en"; see PROVENANCE.md).
func translationIndex(lists, suite, component string) string {
	pat := filepath.Join(lists, "*_dists_"+suite+"_"+component+"_i18n_Translation-en*")
	m, _ := filepath.Glob(pat)
	sort.Strings(m)
	if len(m) == 0 {
		log.Fatalf("no %s: run `apt-get update -o Acquire::Languages=en` first (see PROVENANCE.md)", pat)
	}
	return m[0]
}

// readDebianDescriptions reads a Translation-en index, decompressed by
// apt's own helper (apt stores it lz4, xz or gzip compressed): records of
// "Package:", "Description-md5:" and "Description-en:" with the long
// description on continuation lines, paragraphs separated by " .".
func readDebianDescriptions(path string, seen dedup, emit func(string)) (records, paragraphs int, sum [32]byte) {
	raw, err := exec.Command("/usr/lib/apt/apt-helper", "cat-file", path).Output()
	if err != nil {
		log.Fatalf("apt-helper cat-file %s: %v", path, err)
	}
	sum = sha256.Sum256(raw)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var para []string
	inDesc := false
	flush := func() {
		if len(para) > 0 {
			p := strings.Join(para, " ")
			if seen.fresh(p) {
				emit(p)
				paragraphs++
			}
		}
		para = para[:0]
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Description-en:"):
			flush()
			records++
			inDesc = true
			// the synopsis is a paragraph of its own
			para = append(para, strings.TrimSpace(strings.TrimPrefix(line, "Description-en:")))
			flush()
		case inDesc && strings.HasPrefix(line, " "):
			if strings.TrimSpace(line) == "." {
				flush()
			} else {
				para = append(para, strings.TrimSpace(line))
			}
		default:
			flush()
			inDesc = false
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	return records, paragraphs, sum
}

// manPages lists the manual pages a Debian package installed, sorted.
func manPages(pkg string) []string {
	out, err := exec.Command("dpkg", "-L", pkg).Output()
	if err != nil {
		log.Fatalf("dpkg -L %s: %v: install it with `apt-get install %s`", pkg, err, pkg)
	}
	var files []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "/usr/share/man/man") && strings.HasSuffix(l, ".gz") {
			if st, err := os.Lstat(l); err == nil && st.Mode().IsRegular() {
				files = append(files, l)
			}
		}
	}
	sort.Strings(files)
	return files
}

var (
	roffFont      = regexp.MustCompile(`\\f(\[[^\]]*\]|\(..|.)`)
	roffSpecial   = regexp.MustCompile(`\\(\(..|\[[^\]]*\]|\*\(..|\*\[[^\]]*\]|\*.|s[-+]?\d+|[&e|^"-])`)
	roffMacroText = map[string]bool{"B": true, "I": true, "BR": true, "RB": true, "BI": true, "IB": true,
		"IR": true, "RI": true, "SH": true, "SS": true, "IP": true, "TP": true, "SM": true, "SB": true}
)

// readManPage turns one gzip'd roff manual page into paragraphs of text:
// requests are dropped except those that carry text (.B, .I, .SH, ...),
// escapes removed. It is rough, and need not be better: only which words
// stand near which matters.
func readManPage(path string, seen dedup, emit func(string)) int {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	if bytes.HasPrefix(b, []byte(".so ")) {
		return 0 // a link to another page
	}
	n := 0
	var para []string
	flush := func() {
		if len(para) > 0 {
			p := strings.Join(para, " ")
			if seen.fresh(p) {
				emit(p)
				n++
			}
		}
		para = para[:0]
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" {
			flush()
			continue
		}
		if line[0] == '.' || line[0] == '\'' {
			f := strings.Fields(line[1:])
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "PP", "P", "LP", "SH", "SS", "TP", "IP", "HP", "sp", "br":
				flush()
			}
			if !roffMacroText[f[0]] || len(f) == 1 {
				continue
			}
			line = strings.Join(f[1:], " ")
		}
		line = roffFont.ReplaceAllString(line, "")
		line = roffSpecial.ReplaceAllString(line, " ")
		line = strings.ReplaceAll(line, `\`, " ")
		para = append(para, line)
	}
	flush()
	return n
}
