package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// terminalPeer is the client side of `sandbox run` for the gateway: when a
// policy rule asks for a person's approval (elicitation/create), it asks on
// the terminal. When stdin is not a terminal nobody can answer, and the
// call is denied saying so.
type terminalPeer struct {
	in       io.Reader
	out      io.Writer
	terminal bool

	mu    sync.Mutex // one question at a time
	once  sync.Once
	lines chan string // stdin's lines, read by one goroutine
}

func newTerminalPeer(out io.Writer) *terminalPeer {
	st, err := os.Stdin.Stat()
	return &terminalPeer{in: os.Stdin, out: out, terminal: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *terminalPeer) Supports(capability string) bool { return capability == "elicitation" }

func (p *terminalPeer) Notify(string, json.RawMessage) {}

func (p *terminalPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != "elicitation/create" {
		return nil, fmt.Errorf("sandbox run does not answer %s", method)
	}
	if !p.terminal {
		return nil, errors.New("sandbox run asks on the terminal, and stdin is not one")
	}
	var q struct {
		Message string `json:"message"`
		Schema  struct {
			Properties struct {
				Decision struct {
					Enum []string `json:"enum"`
				} `json:"decision"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &q); err != nil {
		return nil, err
	}
	options := q.Schema.Properties.Decision.Enum
	p.mu.Lock()
	defer p.mu.Unlock()
	p.once.Do(func() {
		p.lines = make(chan string)
		go func() {
			sc := bufio.NewScanner(p.in)
			for sc.Scan() {
				p.lines <- sc.Text()
			}
			close(p.lines)
		}()
	})
	var menu []string
	for i, o := range options {
		menu = append(menu, fmt.Sprintf("%d) %s", i+1, o))
	}
	fmt.Fprintf(p.out, "\nsandbox: %s\n  %s\n  answer with a number: ", q.Message, strings.Join(menu, "   "))
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(p.out)
			return nil, ctx.Err()
		case line, ok := <-p.lines:
			if !ok {
				return json.RawMessage(`{"action":"cancel"}`), nil
			}
			choice := pick(strings.TrimSpace(line), options)
			if choice == "" {
				fmt.Fprintf(p.out, "  answer with a number from 1 to %d: ", len(options))
				continue
			}
			return json.Marshal(map[string]any{"action": "accept", "content": map[string]string{"decision": choice}})
		}
	}
}

// pick is the option an answer names: its number, or the start of its text.
func pick(answer string, options []string) string {
	if answer == "" {
		return ""
	}
	var n int
	if _, err := fmt.Sscanf(answer, "%d", &n); err == nil && fmt.Sprint(n) == answer {
		if n >= 1 && n <= len(options) {
			return options[n-1]
		}
		return ""
	}
	for _, o := range options {
		if strings.HasPrefix(o, strings.ToLower(answer)) {
			return o
		}
	}
	return ""
}
