package vectorindex

import (
	"sort"
	"strings"
	"unicode"
)

// Tools named in an intent. An agent that has seen a tool's name, or guesses
// one, writes it in whatever spelling it has at hand: list_projects,
// listProjects, list-projects, tracker.list_projects, tracker:list_projects,
// tracker__list_projects (the gateway's wire name), tracker.listProjects
// (the TypeScript binding). Such a mention is the strongest evidence an
// intent can carry, so a tool named exactly is the first hit, and tools
// whose names are near the mention (plural for singular, one edit, a word
// more or less) come right after it. As words among the intent's others
// (BM25 over the name's words) a name was one vote among many: in a long
// intent of several phrasings the named tool could miss the top k.

// nameWords are the words of an identifier at its finest split:
// "listProjects", "list_projects", "list-projects", "ListProjects" ->
// list, projects. (splitParts gives a camelCase run whole, then its parts.)
func nameWords(s string) []string {
	var out []string
	whole := -1 // index in out of the last whole camelCase run
	splitParts(s, func(w string, part bool) {
		if !part {
			whole = len(out)
			out = append(out, w)
			return
		}
		if whole >= 0 {
			out = out[:whole] // the parts replace the whole
			whole = -1
		}
		out = append(out, w)
	})
	return out
}

// singular is a name word without a plural ending: entities -> entity,
// nodes -> node, status stays status.
func singular(w string) string { return stripPlural(w) }

// nameMatch is how closely a mention names a tool.
type nameMatch int8

const (
	noMatchName nameMatch = iota
	nearName              // a word more or less, or one edit away
	pluralName            // the same words up to plural endings
	exactName             // the same words
)

// toolName is one tool's name as mentions are matched against it.
type toolName struct {
	server string // the server's name words, joined
	key    string // the name's words, joined
	words  []string
	sing   []string // words, singular
}

// nameTable holds every tool's name for matching mentions.
type nameTable struct {
	tools   []toolName
	exact   map[string][]int32 // key -> tools
	servers map[string]bool    // server keys
}

func newNameTable(entries []*entry) *nameTable {
	nt := &nameTable{tools: make([]toolName, len(entries)), exact: map[string][]int32{}, servers: map[string]bool{}}
	serverKeys := map[string]string{} // a catalog has few servers and many tools
	for i, e := range entries {
		words := e.traits.name
		sk, ok := serverKeys[e.tool.Server]
		if !ok {
			sk = strings.Join(nameWords(e.tool.Server), "")
			serverKeys[e.tool.Server] = sk
		}
		tn := toolName{server: sk, key: strings.Join(words, ""), words: words}
		tn.sing = make([]string, len(words))
		for j, w := range words {
			tn.sing[j] = singular(w)
		}
		nt.tools[i] = tn
		if tn.key != "" {
			nt.exact[tn.key] = append(nt.exact[tn.key], int32(i))
		}
		if tn.server != "" {
			nt.servers[tn.server] = true
		}
	}
	return nt
}

// mention is a tool name as an intent writes it.
type mention struct {
	server string // the server it names ("" when none)
	words  []string
	key    string
	// servers the rest of the intent names ("createIssue() on GitHub"): a
	// mention without a server of its own names only their tools, when
	// there are any
	context map[string]bool
}

// Bounds on name mentions: hostile intents are up to MaxIntentLen bytes.
const (
	maxMentions       = 16
	maxNearPerMention = 4 // near names kept per mention: more is not a name, it is a word
	minEditKeyLen     = 8 // one edit away counts only for names this long
)

// mentions finds the tool names an intent writes: identifiers with a
// separator ('_', '-', camelCase) or a server prefix naming one of the
// catalog's servers with tools in in ("tracker.", "tracker:",
// "tracker__"). Plain words ("echo", "query") are not mentions: as words
// they say what the task is, and BM25 weighs them so.
func (nt *nameTable) mentions(intent string, in among) []mention {
	servers := nt.servers
	if in != nil {
		// A server none of whose tools the search may return is, to it,
		// no server: "github.list_commits" from a caller who may not use
		// github names the list_commits of the servers it may use.
		servers = map[string]bool{}
		for d := range nt.tools {
			if in[d] && nt.tools[d].server != "" {
				servers[nt.tools[d].server] = true
			}
		}
	}
	var out []mention
	var context map[string]bool
	splitWords(intent, func(w string) {
		if servers[w] {
			if context == nil {
				context = map[string]bool{}
			}
			context[w] = true
		}
	})
	for _, tok := range identifierTokens(intent) {
		if len(out) >= maxMentions {
			break
		}
		server, name := splitServer(tok, servers)
		words := nameWords(name)
		if len(words) == 0 {
			continue
		}
		if server == "" && (len(words) < 2 || !looksLikeIdentifier(name)) {
			continue
		}
		out = append(out, mention{server: server, words: words, key: strings.Join(words, ""), context: context})
	}
	return out
}

// splitServer splits "server.tool", "server:tool" or "server__tool" when
// the prefix is one of servers (keys); else it returns the last segment
// after a '.' or ':' ("page.evaluate" -> evaluate) or the token.
func splitServer(tok string, servers map[string]bool) (server, name string) {
	for _, sep := range []string{"__", ":", "."} {
		if i := strings.Index(tok, sep); i > 0 && i+len(sep) < len(tok) {
			if k := strings.Join(nameWords(tok[:i]), ""); servers[k] {
				return k, tok[i+len(sep):]
			}
		}
	}
	if i := strings.LastIndexAny(tok, ".:"); i >= 0 {
		return "", tok[i+1:]
	}
	return "", tok
}

// looksLikeIdentifier reports whether a word is written as code: with '_'
// or '-' between letters, or a lower-to-upper case change.
func looksLikeIdentifier(s string) bool {
	var prev rune
	for _, r := range s {
		if (r == '_' || r == '-') && prev != 0 {
			return true
		}
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			return true
		}
		prev = r
	}
	return false
}

// identifierTokens are the runs of letters, digits, '_', '-', '.' and ':'
// in a text, without leading and trailing punctuation.
func identifierTokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s + " " {
		ok := r == '_' || r == '-' || r == '.' || r == ':' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if ok && start < 0 {
			start = i
		}
		if !ok && start >= 0 {
			if tok := strings.Trim(s[start:i], ".-_:"); tok != "" {
				out = append(out, tok)
			}
			start = -1
		}
	}
	return out
}

// named is a tool named by a mention, and how closely.
type named struct {
	doc     int32
	match   nameMatch
	mention int // which mention, in the order the intent writes them
}

// match returns the tools the mentions name: for each mention, the tools
// named exactly, else those up to plural endings, else near names (one edit
// away, or a word more or less: "trigger_sampling",
// "update_status", "db.query"), at most maxNearPerMention of them (a mention
// near more tools names none in particular). A mention with a server names
// only that server's tools. Only tools in in are named: to a filtered
// search the others do not exist, so they neither take an exact match's
// place nor crowd a near name past maxNearPerMention.
func (nt *nameTable) match(ms []mention, in among) []named {
	var out []named
	for mi, m := range ms {
		sing := make([]string, len(m.words))
		for j, w := range m.words {
			sing[j] = singular(w)
		}
		var best nameMatch
		var docs []int32
		for _, d := range nt.candidates(m, in) {
			tn := &nt.tools[d]
			if !in.has(d) || m.server != "" && tn.server != m.server || m.server == "" && m.context != nil && !m.context[tn.server] {
				continue
			}
			var got nameMatch
			switch {
			case tn.key == m.key:
				got = exactName
			case equalWords(tn.sing, sing):
				got = pluralName
			case len(m.key) >= minEditKeyLen && damerau(m.key, tn.key, 1) == 1:
				got = nearName
			case (len(sing) >= 2 || m.server != "") && subsequence(sing, tn.sing):
				got = nearName // a word fewer: "update_status" for update_task_status
			case len(tn.sing) >= 2 && subsequence(tn.sing, sing):
				got = nearName // a word more: "write_text_file" for write_file
			}
			if got == noMatchName || got < best {
				continue
			}
			if got > best {
				best, docs = got, docs[:0]
			}
			docs = append(docs, d)
		}
		if best == noMatchName || best == nearName && len(docs) > maxNearPerMention {
			continue
		}
		for _, d := range docs {
			out = append(out, named{doc: d, match: best, mention: mi})
		}
	}
	return out
}

// candidates are the tools a mention may name: those of the exact key
// first (the common case costs one map lookup), and every tool when it
// names none of in exactly (near names need a look at each; a catalog's
// names are short, and an intent holds at most maxMentions mentions).
func (nt *nameTable) candidates(m mention, in among) []int32 {
	if docs := nt.exact[m.key]; len(docs) > 0 {
		for _, d := range docs {
			if in.has(d) && (m.server == "" || nt.tools[d].server == m.server) {
				return docs
			}
		}
	}
	all := make([]int32, len(nt.tools))
	for i := range all {
		all[i] = int32(i)
	}
	return all
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// subsequence reports whether every word of a occurs in b, in order, and b
// is longer.
func subsequence(a, b []string) bool {
	if len(a) == 0 || len(a) >= len(b) {
		return false
	}
	j := 0
	for _, w := range b {
		if j < len(a) && a[j] == w {
			j++
		}
	}
	return j == len(a)
}

// byMention orders named tools: exact before near, then as the intent
// mentions them, then by document.
func byMention(ns []named) {
	sort.SliceStable(ns, func(i, j int) bool {
		if ns[i].match != ns[j].match {
			return ns[i].match > ns[j].match
		}
		if ns[i].mention != ns[j].mention {
			return ns[i].mention < ns[j].mention
		}
		return ns[i].doc < ns[j].doc
	})
}
