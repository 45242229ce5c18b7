package config

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// Typed value readers: each checks a node's kind and value and says at its
// position what it should be.

func (p *parser) str(n *jsonNode, what string) (string, error) {
	if n.kind != jsonString {
		return "", p.errAt(n.offset, "%q must be a string, found %s", what, n.kind)
	}
	return n.str, nil
}

func (p *parser) expandedString(n *jsonNode, what string) (string, error) {
	s, err := p.str(n, what)
	if err != nil {
		return "", err
	}
	return p.expand(n, s)
}

// expand replaces ${VAR} and ${VAR:-default}.
func (p *parser) expand(n *jsonNode, s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", p.errAt(n.offset, "unclosed \"${\" in %q; write ${NAME} or ${NAME:-default}", s)
		}
		expr, err := clientVariable(s[i+2 : i+j])
		if err != nil {
			return "", p.errAt(n.offset, "%v", err)
		}
		name, def, hasDef := strings.Cut(expr, ":-")
		if val, ok := p.getenv(name); ok && (val != "" || !hasDef) {
			b.WriteString(val)
		} else if val, ok := p.vscodeVariable(name); ok {
			b.WriteString(val)
		} else if hasDef {
			b.WriteString(def)
		} else {
			return "", p.errAt(n.offset, "environment variable %s is not set; set it or write ${%s:-default}", name, name)
		}
		s = s[i+j+1:]
	}
}

func (p *parser) boolean(n *jsonNode, what string) (bool, error) {
	if n.kind != jsonBool {
		return false, p.errAt(n.offset, "%q must be true or false, found %s", what, n.kind)
	}
	return n.b, nil
}

func (p *parser) positiveInt(n *jsonNode, what string) (int, error) {
	if n.kind != jsonNumber {
		return 0, p.errAt(n.offset, "%q must be a positive whole number, found %s", what, n.kind)
	}
	i, err := strconv.Atoi(n.num.String())
	if err != nil || i <= 0 {
		return 0, p.errAt(n.offset, "%q must be a positive whole number, got %s", what, n.num)
	}
	return i, nil
}

func (p *parser) nonNegativeInt(n *jsonNode, what string) (int, error) {
	if n.kind != jsonNumber {
		return 0, p.errAt(n.offset, "%q must be a whole number, 0 or more, found %s", what, n.kind)
	}
	i, err := strconv.Atoi(n.num.String())
	if err != nil || i < 0 {
		return 0, p.errAt(n.offset, "%q must be a whole number, 0 or more, got %s", what, n.num)
	}
	return i, nil
}

func (p *parser) duration(n *jsonNode, what string) (time.Duration, error) {
	d, err := p.durationAllowZero(n, what)
	if err == nil && d <= 0 {
		return 0, p.errAt(n.offset, "%q must be longer than zero", what)
	}
	return d, err
}

func (p *parser) durationAllowZero(n *jsonNode, what string) (time.Duration, error) {
	if n.kind != jsonString {
		return 0, p.errAt(n.offset, "%q must be a duration string such as \"30s\" or \"1m30s\", found %s", what, n.kind)
	}
	d, err := time.ParseDuration(n.str)
	if err != nil || d < 0 {
		return 0, p.errAt(n.offset, "%q: %q is not a duration; write it like \"500ms\", \"30s\" or \"2m\"", what, n.str)
	}
	return d, nil
}

func (p *parser) stringList(n *jsonNode, what string, expand bool) ([]string, error) {
	if n.kind != jsonArray {
		return nil, p.errAt(n.offset, "%q must be an array of strings, found %s", what, n.kind)
	}
	out := make([]string, 0, len(n.arr))
	for _, e := range n.arr {
		if e.kind != jsonString {
			return nil, p.errAt(e.offset, "every element of %q must be a string, found %s", what, e.kind)
		}
		s := e.str
		if expand {
			var err error
			if s, err = p.expand(e, s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) stringMap(n *jsonNode, what string, expand bool) (map[string]string, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "%q must be an object of string values, found %s", what, n.kind)
	}
	out := make(map[string]string, len(n.keys))
	for _, k := range n.keys {
		if k.value.kind != jsonString {
			return nil, p.errAt(k.value.offset, "%s.%s must be a string, found %s", what, k.name, k.value.kind)
		}
		s := k.value.str
		if expand {
			var err error
			if s, err = p.expand(k.value, s); err != nil {
				return nil, err
			}
		}
		out[k.name] = s
	}
	return out, nil
}

func (p *parser) toolTimeouts(n *jsonNode) (map[string]time.Duration, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "\"toolTimeouts\" must map tool names to durations, e.g. {\"search\": \"60s\"}, found %s", n.kind)
	}
	out := make(map[string]time.Duration, len(n.keys))
	for _, k := range n.keys {
		tool, err := gateway.ValidateName(k.name)
		if err != nil {
			return nil, p.errAt(k.offset, "toolTimeouts: %v", err)
		}
		d, err := p.duration(k.value, "toolTimeouts."+k.name)
		if err != nil {
			return nil, err
		}
		out[tool] = d
	}
	return out, nil
}

func (p *parser) rateLimit(n *jsonNode) (*gateway.RateLimit, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "\"rateLimit\" must be an object such as {\"perSecond\": 5, \"burst\": 10}, found %s", n.kind)
	}
	rl := &gateway.RateLimit{}
	for _, k := range n.keys {
		switch k.name {
		case "perSecond":
			if k.value.kind != jsonNumber {
				return nil, p.errAt(k.value.offset, "\"perSecond\" must be a number, found %s", k.value.kind)
			}
			f, err := k.value.num.Float64()
			if err != nil || f <= 0 {
				return nil, p.errAt(k.value.offset, "\"perSecond\" must be greater than zero, got %s", k.value.num)
			}
			rl.PerSecond = f
		case "burst":
			b, err := p.positiveInt(k.value, "burst")
			if err != nil {
				return nil, err
			}
			rl.Burst = b
		default:
			return nil, p.errAt(k.offset, "unknown key %q in \"rateLimit\"; known keys: perSecond, burst", k.name)
		}
	}
	if rl.PerSecond == 0 {
		return nil, p.errAt(n.offset, "\"rateLimit\" needs \"perSecond\"")
	}
	if rl.Burst == 0 {
		rl.Burst = max(1, int(rl.PerSecond))
	}
	return rl, nil
}

func (p *parser) pathRoots(n *jsonNode) ([]string, error) {
	list, err := p.stringList(n, "pathRoots", true)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for i, r := range list {
		if r == "" {
			return nil, p.errAt(n.arr[i].offset, "an empty path root would allow nothing; remove it")
		}
		if !filepath.IsAbs(r) {
			if p.baseDir == "" {
				return nil, p.errAt(n.arr[i].offset, "path root %q must be absolute", r)
			}
			r = filepath.Join(p.baseDir, r)
		}
		out = append(out, filepath.Clean(r))
	}
	return out, nil
}
