package vectorindex

import (
	"encoding/json"
	"strings"
	"sync"
)

// What a tool does to the world, and whether it is on its way out: read
// from its annotations and description when the tool is indexed, used when
// it is ranked.

// effect is what calling a tool does, by its MCP annotations.
type effect int8

const (
	effectUnknown     effect = iota // no annotations
	effectRead                      // readOnlyHint
	effectWrite                     // changes things, destructiveHint false
	effectDestructive               // destructiveHint (MCP's default when not read-only)
)

// traits are what ranking knows of a tool beyond its analysed text, made
// once per tool (entries outlive the states that hold them).
type traits struct {
	effect     effect
	deprecated bool
	name       []string // nameWords of the tool's name
	nameTerms  []string // their terms
}

func toolTraits(a *analyzer, t Tool, effects *effectCache) traits {
	tr := traits{effect: effects.of(t), deprecated: IsDeprecated(t.Description), name: nameWords(t.Name)}
	for _, w := range tr.name {
		if term := a.term(w); term != "" {
			tr.nameTerms = append(tr.nameTerms, term)
		}
	}
	return tr
}

// effectCache remembers what annotations say while a catalog's tools are
// read: catalogs repeat a few annotation objects over thousands of tools.
// Its zero value is ready; it is safe for concurrent use.
type effectCache struct{ m sync.Map }

type annotated struct {
	e      effect
	stated bool
}

// of is toolEffect, with each distinct annotations object decoded once.
func (c *effectCache) of(t Tool) effect {
	var a annotated
	if v, ok := c.m.Load(string(t.Annotations)); ok {
		a = v.(annotated)
	} else {
		a.e, a.stated = annotatedEffect(t.Annotations)
		c.m.Store(string(t.Annotations), a)
	}
	return effectOf(t, a.e, a.stated)
}

// toolEffect is what calling the tool does, by its annotations, else by
// its name.
func toolEffect(t Tool) effect {
	e, stated := annotatedEffect(t.Annotations)
	return effectOf(t, e, stated)
}

// effectOf is the effect of a tool whose annotations say e (stated: outright).
func effectOf(t Tool, e effect, stated bool) effect {
	if !stated {
		// No annotations, or only readOnlyHint false with destructiveHint
		// left to its default: the name says more ("api-post-search" is
		// not read-only over HTTP, yet it searches).
		switch named := namedEffect(t.Name); {
		case e == effectUnknown:
			e = named
		case named == effectRead:
			e = effectUnknown
		case named != effectUnknown:
			e = named
		}
	}
	return e
}

// namedEffect guesses what a tool without annotations does from the last
// word of its name that is a verb the guess knows: list_tables reads,
// create_table writes, drop_table destroys, get_or_create_user writes,
// api-post-search (an HTTP method, then what it does) reads. Most servers
// annotate nothing.
func namedEffect(name string) effect {
	e := effectUnknown
	for _, w := range nameWords(name) {
		if v, ok := verbEffect[w]; ok {
			e = v
		}
	}
	return e
}

var verbEffect = func() map[string]effect {
	m := map[string]effect{}
	for e, words := range map[effect]string{
		effectRead: "get list read search find query describe show fetch count view lookup retrieve inspect " +
			"explain browse download export select",
		effectWrite: "create add insert update set write edit put patch post append upload push send assign " +
			"rename move copy merge fork star open start run trigger toggle enable disable close commit " +
			"apply upsert save",
		effectDestructive: "delete remove drop destroy purge erase wipe truncate kill terminate uninstall revoke " +
			"reset clear cancel",
	} {
		for _, w := range strings.Fields(words) {
			m[w] = e
		}
	}
	return m
}()

// annotatedEffect reads readOnlyHint and destructiveHint, and says whether
// the annotations state the effect outright. MCP says destructiveHint
// defaults to true and counts only when readOnlyHint is false: a tool that
// says it is not read-only and no more may destroy, by default.
func annotatedEffect(raw json.RawMessage) (e effect, stated bool) {
	if len(raw) == 0 {
		return effectUnknown, false
	}
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	if json.Unmarshal(raw, &a) != nil || a.ReadOnly == nil && a.Destructive == nil {
		return effectUnknown, false
	}
	switch {
	case a.ReadOnly != nil && *a.ReadOnly:
		return effectRead, true
	case a.Destructive != nil && !*a.Destructive:
		return effectWrite, true
	case a.Destructive != nil:
		return effectDestructive, true
	default:
		return effectDestructive, false
	}
}

// IsDeprecated reports whether a tool's description says it is deprecated:
// "Deprecated: ...", "(deprecated)", "[DEPRECATED]", "... DEPRECATED: Use
// read_text_file instead." A description that only mentions the word
// ("replaces the deprecated v1 endpoint") does not.
func IsDeprecated(description string) bool {
	d := strings.ToLower(strings.TrimSpace(description))
	if strings.HasPrefix(d, "deprecated") || strings.Contains(d, "(deprecated") || strings.Contains(d, "[deprecated") ||
		strings.Contains(d, "deprecated:") || strings.Contains(d, "is deprecated") {
		return true
	}
	return strings.Contains(description, "DEPRECATED")
}

// replacements maps each deprecated tool to the tools of its own server
// that its description names ("DEPRECATED: Use read_text_file instead"),
// which it yields to when both match an intent.
func replacements(entries []*entry, names *nameTable) map[int32][]int32 {
	out := map[int32][]int32{}
	for i, e := range entries {
		if !e.traits.deprecated {
			continue
		}
		for _, n := range names.match(names.mentions(e.tool.Description, nil), nil) {
			if n.match == exactName && int(n.doc) != i && entries[n.doc].tool.Server == e.tool.Server {
				out[int32(i)] = append(out[int32(i)], n.doc)
			}
		}
	}
	return out
}

// isQuestion reports whether an intent asks to be told something ("which
// tasks are blocked", "how many ...", "list/show/find/get ...", "... ?")
// rather than to change something: then tools that only read rank above
// tools that change things, when both match.
func isQuestion(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	if strings.HasSuffix(t, "?") {
		return true
	}
	first := firstWord(t)
	if questionWords[first] {
		return true
	}
	// "is there", "are there", "do we have", "does ... have"
	switch first {
	case "is", "are", "do", "does", "did", "was", "were", "has", "have", "can":
		return len(strings.Fields(t)) >= 3
	}
	return false
}

var questionWords = map[string]bool{
	"which": true, "what": true, "whats": true, "who": true, "whom": true, "whose": true, "how": true, "when": true,
	"where": true, "why": true, "list": true, "show": true, "find": true, "get": true, "search": true,
	"count": true, "lookup": true, "view": true, "display": true, "fetch": true, "read": true, "print": true,
	"describe": true, "summarize": true, "summarise": true,
}

// Boilerplate is text a server repeats in most of its tools' descriptions
// (server-filesystem ends 12 of its 14 with "Only works within allowed
// directories."), and the server's instructions, the same for each of its
// tools. It may tell one server's tools from another's, never what a tool
// does: a tool that matches an intent only through it ("remember that Alice
// works at Acme" and "works") is a weak match (Hit.Weak). A sentence is
// boilerplate when at least boilerplateShare of the server's tools, and at
// least boilerplateMinTools, have it.
const (
	boilerplateShare    = 0.5
	boilerplateMinTools = 3
)

// boilerplate finds each server's boilerplate terms: the terms of its
// repeated sentences and of its instructions.
func boilerplate(a *analyzer, entries []*entry) map[string]map[string]bool {
	byServer := map[string][]*entry{}
	for _, e := range entries {
		byServer[e.tool.Server] = append(byServer[e.tool.Server], e)
	}
	out := map[string]map[string]bool{}
	add := func(server, text string, secondary bool) {
		splitWords(text, func(w string) {
			if t := a.term(w); t != "" {
				if out[server] == nil {
					out[server] = map[string]bool{}
				}
				if secondary {
					t = secondaryTerm(t)
				}
				out[server][t] = true
			}
		})
	}
	for server, es := range byServer {
		if es[0].tool.ServerInstructions != "" {
			add(server, es[0].tool.ServerInstructions, true)
		}
		if len(es) < boilerplateMinTools {
			continue
		}
		count := map[string]int{}
		for _, e := range es {
			seen := map[string]bool{}
			for _, s := range sentences(e.tool.Description) {
				if !seen[s] {
					seen[s] = true
					count[s]++
				}
			}
		}
		for s, n := range count {
			if n >= boilerplateMinTools && float64(n) >= boilerplateShare*float64(len(es)) {
				add(server, s, false)
			}
		}
	}
	return out
}

// sentences splits a description into its sentences, lowercased and
// trimmed (at ". ", "! ", "? " and line breaks).
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := c == '\n' || (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n')
		if end || i+1 == len(text) {
			if s := strings.ToLower(strings.TrimSpace(text[start : i+1])); len(s) > 1 {
				out = append(out, strings.TrimRight(s, ".!?"))
			}
			start = i + 1
		}
	}
	return out
}
