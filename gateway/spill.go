package gateway

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
	"github.com/sandboxrt/sandbox/internal/jsonstream"
)

// Results too large to hold in memory. A tools/call answer longer than
// Settings.MaxResultBytes is written to a file as it arrives (the upstream
// connection stages it: gateway/internal/upstream/staging.go) when the call
// takes one (CallRequest.Spill: code mode, whose snippets receive a handle).
// Here the staged answer, the whole JSON-RPC response as the server sent
// it, becomes the value a snippet would receive (ARCHITECTURE.md contract
// 2: structuredContent when present, else the text of the content blocks,
// else the blocks), copied to a file of its own through the redactor, and
// counted once: a server that sends its text twice (in content and in
// structuredContent, as server-filesystem does) costs the size of one.
// Nothing of it is held in memory but buffers.

// SpilledResult is a tool result too large to hold in memory, in a file:
// the JSON text of the value a snippet receives (structuredContent when the
// result has one; else, when every content block is text, the text as one
// JSON string, blocks joined by newlines, even when the text holds JSON;
// else the content blocks), with known secrets redacted. Whoever receives
// one must Remove it.
type SpilledResult struct {
	// Bytes is the size of the value's JSON text.
	Bytes int64
	path  string
}

// Open reads the value's JSON text.
func (s *SpilledResult) Open() (*os.File, error) { return os.Open(s.path) }

// Remove deletes the file.
func (s *SpilledResult) Remove() error { return os.Remove(s.path) }

// spillCeiling is the largest result a call that takes a spilled one
// receives (Settings.MaxSpilledResultBytes; 0 its default), or 0 when
// nothing is spilled.
func (g *Gateway) spillCeiling() int64 {
	s := g.cfg.Settings
	ceiling := s.MaxSpilledResultBytes
	if ceiling == 0 {
		ceiling = DefaultMaxSpilledResultBytes
	}
	if ceiling <= s.MaxResultBytes {
		return 0
	}
	return ceiling
}

// maxStagedBytes is the longest answer staged for a spilled result: its
// value may be in it twice (content and structuredContent), with room for
// the rest of the response.
func (g *Gateway) maxStagedBytes() int64 {
	if c := g.spillCeiling(); c > 0 {
		return 2*c + 1<<20
	}
	return 0
}

// stageDir is this gateway's folder for answers too large for memory, made
// when the first one arrives (under WithSpillDir's folder, else the
// system's temporary folder) and removed by Close; making it sweeps the
// folders of gateways that died without their Close (spillsweep_unix.go).
func (g *Gateway) stageDir() (string, error) {
	g.spillOnce.Do(func() {
		dir, err := os.MkdirTemp(g.spillBase, "sandbox-spill-")
		if err != nil {
			g.spillErr = err
			return
		}
		if g.spillLock, err = holdSpillDir(dir); err != nil {
			_ = os.RemoveAll(dir)
			g.spillErr = err
			return
		}
		g.spillDir = dir
		if n := sweepSpillDirs(g.spillBase, dir); n > 0 {
			g.log.Info("removed staging folders left by gateways that died", "folders", n, "under", filepath.Dir(dir))
		}
	})
	return g.spillDir, g.spillErr
}

// spillOwnerFile is the lock file in each staging folder, held by the
// gateway whose folder it is (spillsweep_unix.go).
const spillOwnerFile = ".owner"

// WithSpillDir sets the folder under which answers too large for memory
// are written while they are read (default: the system's temporary
// folder). The gateway makes a folder of its own in it and removes it when
// it closes.
func WithSpillDir(dir string) Option {
	return func(g *Gateway) error {
		g.spillBase = dir
		return nil
	}
}

// resultParts are where the parts of a staged answer are, as offsets in its
// file.
type resultParts struct {
	hasResult  bool
	isError    bool
	structured *span  // structuredContent, unless absent or null
	content    *span  // the content array
	blocks     []span // each content block's text string, while every block is text
	allText    bool
}

type span struct{ start, end int64 }

// maxTextBlocks bounds the content blocks of a staged answer read as text;
// one with more keeps its blocks as they are.
const maxTextBlocks = 10000

// findResultParts reads the staged JSON-RPC response for the parts of its
// result.
func findResultParts(r io.Reader) (*resultParts, error) {
	d := jsonstream.NewReader(r)
	p := &resultParts{allText: true}
	if err := d.Expect('{'); err != nil {
		return nil, err
	}
	for !d.Eat('}') {
		key, _, err := d.Key(16)
		if err != nil {
			return nil, err
		}
		if key == "result" {
			if err := p.readResult(d); err != nil {
				return nil, err
			}
		} else if err := d.Skip(); err != nil {
			return nil, err
		}
		d.Eat(',')
	}
	if !p.hasResult {
		return nil, errors.New("the answer has no result (a JSON-RPC error too large to read)")
	}
	return p, nil
}

func (p *resultParts) readResult(d *jsonstream.Reader) error {
	p.hasResult = true
	if err := d.Expect('{'); err != nil {
		return fmt.Errorf("result is not a JSON object: %w", err)
	}
	for !d.Eat('}') {
		key, _, err := d.Key(32)
		if err != nil {
			return err
		}
		switch key {
		case "structuredContent":
			b, err := d.Peek()
			if err != nil {
				return err
			}
			start := d.Offset()
			if err := d.Skip(); err != nil {
				return err
			}
			if b != 'n' { // null is no structured content
				p.structured = &span{start, d.Offset()}
			}
		case "content":
			if err := p.readContent(d); err != nil {
				return err
			}
		case "isError":
			v, err := d.Scalar(8)
			if err != nil {
				return err
			}
			p.isError = v == "true"
		default:
			if err := d.Skip(); err != nil {
				return err
			}
		}
		d.Eat(',')
	}
	return nil
}

func (p *resultParts) readContent(d *jsonstream.Reader) error {
	if b, err := d.Peek(); err != nil || b != '[' {
		return errors.New("content is not an array")
	}
	start := d.Offset()
	d.Expect('[')
	p.blocks = p.blocks[:0]
	for i := 0; !d.Eat(']'); i++ {
		if b, err := d.Peek(); err != nil || b != '{' {
			return fmt.Errorf("content block %d is not a JSON object", i)
		}
		if i >= maxTextBlocks {
			p.allText = false
		}
		d.Expect('{')
		text, isText := (*span)(nil), false
		for !d.Eat('}') {
			key, _, err := d.Key(16)
			if err != nil {
				return err
			}
			switch b, _ := d.Peek(); {
			case key == "type" && b == '"':
				t, _, err := d.String(8)
				if err != nil {
					return err
				}
				isText = t == "text"
			case key == "text" && b == '"':
				s := d.Offset()
				if err := d.Skip(); err != nil {
					return err
				}
				text = &span{s, d.Offset()}
			default:
				if err := d.Skip(); err != nil {
					return err
				}
			}
			d.Eat(',')
		}
		if isText && text != nil && p.allText {
			p.blocks = append(p.blocks, *text)
		} else {
			p.allText = false
		}
		d.Eat(',')
	}
	p.content = &span{start, d.Offset()}
	return nil
}

// valueSize is the size of the value's JSON text before redaction.
func (p *resultParts) valueSize() int64 {
	switch {
	case p.structured != nil:
		return p.structured.end - p.structured.start
	case p.content != nil && p.allText && len(p.blocks) > 0:
		n := int64(2 + 2*(len(p.blocks)-1)) // the quotes, and "\n" between blocks
		for _, b := range p.blocks {
			n += b.end - b.start - 2
		}
		return n
	case p.content != nil && len(p.blocks) == 0 && p.allText:
		return 4 // null: an empty result
	case p.content != nil:
		return p.content.end - p.content.start
	}
	return 4
}

// writeValue copies the value's JSON text from the staged answer src to w.
func (p *resultParts) writeValue(w io.Writer, src io.ReaderAt) error {
	section := func(s span) error {
		_, err := io.Copy(w, io.NewSectionReader(src, s.start, s.end-s.start))
		return err
	}
	switch {
	case p.structured != nil:
		return section(*p.structured)
	case p.content != nil && p.allText && len(p.blocks) > 0:
		// The blocks' texts are already escaped JSON string contents:
		// joining them needs no decoding.
		if _, err := io.WriteString(w, `"`); err != nil {
			return err
		}
		for i, b := range p.blocks {
			if i > 0 {
				if _, err := io.WriteString(w, `\n`); err != nil {
					return err
				}
			}
			if err := section(span{b.start + 1, b.end - 1}); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, `"`)
		return err
	case p.content != nil && !(p.allText && len(p.blocks) == 0):
		return section(*p.content)
	}
	_, err := io.WriteString(w, "null")
	return err
}

// errorText is the start of the first text block of an isError answer,
// redacted before it is cut (a secret cut in two would not be found).
func (p *resultParts) errorText(src io.ReaderAt, secrets secretSet) string {
	if len(p.blocks) == 0 {
		return ""
	}
	const most = 2000
	b := p.blocks[0]
	d := jsonstream.NewReader(io.NewSectionReader(src, b.start, b.end-b.start))
	var sb strings.Builder
	// As much more as a secret read through escapes can take (redact.go).
	_, _ = io.Copy(&sb, io.LimitReader(d.Text(), most+216*int64(secrets.maxLen)))
	text := secrets.text(sb.String())
	if len(text) > most {
		cut := most
		for cut > 0 && !utf8RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return text
}

// spill turns a staged answer into the call's spilled result (or its
// error), and removes the staged file.
func (g *Gateway) spill(c *call, staged *upstream.Staged) (*CallResult, *Error) {
	defer staged.Remove()
	src, err := os.Open(staged.Path)
	if err != nil {
		return nil, g.spillFailed(c, err)
	}
	defer src.Close()
	parts, err := findResultParts(bufio.NewReaderSize(src, 64<<10))
	if err != nil {
		return nil, newError(CodeProtocolError, c.toolID, err, map[string]any{"server": c.u.name},
			"%s answered with something that is not a valid tool result (%v); the server may be broken — try another tool or report it", c.toolID, err)
	}
	if parts.isError {
		msg := parts.errorText(src, *c.secrets)
		if msg == "" {
			msg = "the tool reported an error without a message"
		}
		return &CallResult{IsError: true, Content: []json.RawMessage{}}, newError(CodeUpstreamError, c.toolID, nil,
			map[string]any{"bytes": staged.Size}, "%s", msg+" (the rest of the tool's error, "+formatSize(staged.Size)+", was too large to keep)")
	}
	ceiling := g.spillCeiling()
	if size := parts.valueSize(); size > ceiling {
		return nil, tooLarge(c.toolID, size, ceiling, 0)
	}
	dir, err := g.stageDir()
	if err != nil {
		return nil, g.spillFailed(c, err)
	}
	out, err := os.CreateTemp(dir, "result-*.json")
	if err != nil {
		return nil, g.spillFailed(c, err)
	}
	counted := &countingWriter{w: out}
	buffered := bufio.NewWriterSize(counted, 64<<10)
	rw := c.secrets.writer(buffered)
	err = parts.writeValue(rw, src)
	if err == nil {
		err = rw.Close()
	}
	if err == nil {
		err = buffered.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(out.Name())
		return nil, g.spillFailed(c, err)
	}
	return &CallResult{Content: []json.RawMessage{}, Spilled: &SpilledResult{Bytes: counted.n, path: out.Name()}}, nil
}

// stageInMemory writes an answer held in memory (an in-process server's) to
// a staged file, as a stdio server's long answer is, so that it is spilled
// the same way. raw is the result: it is written as a response's.
func (g *Gateway) stageInMemory(raw []byte) (*upstream.Staged, error) {
	dir, err := g.stageDir()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "answer-*.json")
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(`{"result":`)
	if err == nil {
		_, err = f.Write(raw)
	}
	if err == nil {
		_, err = f.WriteString("}")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &upstream.Staged{Path: f.Name(), Size: int64(len(raw))}, nil
}

// spillFailed is the error of a spilled result the gateway could not write.
func (g *Gateway) spillFailed(c *call, err error) *Error {
	g.log.Warn("a tool result too large for memory could not be written to disk", "tool", c.toolID, "error", err)
	return newError(CodeInternal, c.toolID, err, nil,
		"the result of %s is too large for memory and the gateway could not write it to disk; call again later, and tell the operator if it persists", c.toolID)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// formatSize writes a byte count for people: "44000123 bytes (41 MiB)".
func formatSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%d MiB)", n, n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d bytes (%d KiB)", n, n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
