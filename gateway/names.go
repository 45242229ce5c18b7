package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Names. A tool has three names, each for one audience:
//
//   - ID "server:tool": the internal id everywhere (catalog, index, errors,
//     traces). Both halves are normalized: lower case, '.' and ' ' turned
//     into '_', and must then match [a-z0-9_-]+.
//   - UpstreamName: exactly what the upstream listed; the only name sent upstream.
//   - WireName: what the gateway's own MCP front end lists, [A-Za-z0-9_-]{1,64},
//     "server__tool" in prefixed mode.
//
// Names that would be dangerous as JavaScript property names (the bindings
// turn servers and tools into object properties) are refused outright.

// maxNameLen bounds a normalized server or tool name. MCP allows 128.
const maxNameLen = 128

// maxWireNameLen is what the strictest common MCP clients accept.
const maxWireNameLen = 64

// reservedNames are property names with special meaning on JavaScript
// objects or promises. A tool or server by that name would shadow or hijack
// them inside the VM ("then" makes a namespace object a thenable).
var reservedNames = map[string]bool{
	"__proto__": true, "constructor": true, "prototype": true, "then": true,
	"__definegetter__": true, "__definesetter__": true, "__lookupgetter__": true, "__lookupsetter__": true,
	"hasownproperty": true, "isprototypeof": true, "propertyisenumerable": true,
	"tostring": true, "tolocalestring": true, "valueof": true, "tojson": true,
	"caller": true, "callee": true, "arguments": true,
}

// NormalizeName lower-cases name and turns '.' and ' ' into '_'. It does not
// validate; see [ValidateName].
func NormalizeName(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if c == '.' || c == ' ' {
			b[i] = '_'
		}
	}
	return string(b)
}

// ValidateName normalizes a server or tool name and checks it. The error
// says why the name was refused; callers log it and skip the tool.
func ValidateName(name string) (string, error) {
	n := NormalizeName(name)
	switch {
	case n == "":
		return "", fmt.Errorf("empty name")
	case len(n) > maxNameLen:
		return "", fmt.Errorf("name %.40q... is %d bytes long, more than %d", name, len(n), maxNameLen)
	case reservedNames[n]:
		return "", fmt.Errorf("name %q is reserved: it would shadow a built-in JavaScript property", name)
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "", fmt.Errorf("name %q has the character %q at byte %d; only letters, digits, '_', '-' and '.' are allowed", name, rune(c), i)
		}
	}
	return n, nil
}

// ToolID joins a normalized server and tool name into the internal id.
func ToolID(server, tool string) string { return server + ":" + tool }

// SplitToolID splits "server:tool" at the first ':'.
func SplitToolID(id string) (server, tool string, ok bool) {
	i := strings.IndexByte(id, ':')
	if i < 0 {
		return "", id, false
	}
	return id[:i], id[i+1:], true
}

// WireNaming chooses the names the MCP front end lists.
type WireNaming string

const (
	// WirePrefixed names every tool "server__tool" (the default): names from
	// different servers cannot collide and say where a tool comes from.
	WirePrefixed WireNaming = "prefixed"
	// WirePassthrough keeps each upstream's own tool name, so a client sees the
	// upstream exactly as if connected directly. A name that collides with an
	// earlier server's (servers sorted by name) or is not valid on the wire
	// falls back to the prefixed form.
	WirePassthrough WireNaming = "passthrough"
)

// assignWireNames gives every tool id a distinct wire name, deterministically:
// the result depends only on the set of ids, never on their order. ids is a
// map from id to the upstream's own tool name.
func assignWireNames(ids map[string]string, naming WireNaming, reserved map[string]bool) map[string]string {
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)

	// First pass: the preferred name of each id.
	preferred := make(map[string]string, len(ids))
	for _, id := range sorted {
		server, tool, _ := SplitToolID(id)
		if naming == WirePassthrough && validWireName(ids[id]) {
			preferred[id] = ids[id]
			continue
		}
		preferred[id] = sanitizeWireName(server + "__" + tool)
	}

	// Second pass: the first id (in sorted order) to claim a name keeps it;
	// later claimants get the hashed form, which is unique per id. In
	// passthrough mode a taken name falls back to the prefixed form first.
	out := make(map[string]string, len(ids))
	taken := make(map[string]bool, len(ids)+len(reserved))
	for name := range reserved {
		taken[name] = true
	}
	claim := func(id, name string) bool {
		if taken[name] {
			return false
		}
		taken[name] = true
		out[id] = name
		return true
	}
	var losers []string
	for _, id := range sorted {
		if claim(id, preferred[id]) {
			continue
		}
		losers = append(losers, id)
	}
	for _, id := range losers {
		server, tool, _ := SplitToolID(id)
		if naming == WirePassthrough && claim(id, sanitizeWireName(server+"__"+tool)) {
			continue
		}
		if !claim(id, hashedWireName(server+"__"+tool, id)) {
			// Only a sha256 collision gets here; keep it total anyway.
			for i := 2; !claim(id, hashedWireName(server+"__"+tool, fmt.Sprintf("%s#%d", id, i))); i++ {
			}
		}
	}
	return out
}

// validWireName reports whether name is acceptable to strict MCP clients.
func validWireName(name string) bool {
	if name == "" || len(name) > maxWireNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// sanitizeWireName maps name into [A-Za-z0-9_-] and, when it is longer than
// 64 bytes, shortens it with a hash of the full name so that long names that
// share a prefix stay distinct.
func sanitizeWireName(name string) string {
	s := sanitizeWireNameChars(name)
	if len(s) <= maxWireNameLen {
		return s
	}
	return hashedWireName(s, name)
}

// hashedWireName is name cut to fit 64 bytes with "_" and 8 hex digits of
// sha256(key) appended.
func hashedWireName(name, key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "_" + hex.EncodeToString(sum[:4])
	name = sanitizeWireNameChars(name)
	if len(name)+len(suffix) > maxWireNameLen {
		name = name[:maxWireNameLen-len(suffix)]
	}
	return name + suffix
}

func sanitizeWireNameChars(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
