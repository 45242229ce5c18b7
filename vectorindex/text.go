package vectorindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitWords calls fn for every word of s, lowercased. See splitParts.
func splitWords(s string, fn func(w string)) {
	splitParts(s, func(w string, _ bool) { fn(w) })
}

// splitParts calls fn for every word of s, lowercased. Words are runs of
// letters and digits; snake_case, kebab-case, dotted.names and paths split
// at the punctuation. A run written in camelCase or PascalCase is given
// whole and then in parts, the parts flagged: "listPullRequests" -> listpullrequests,
// then list, pull, requests; "GitHub" -> github, then git, hub. Callers
// decide which to trust (a brand name is one word, an identifier several).
// A trailing plural "s" on an acronym stays with it ("PRs" -> prs, "URLs" ->
// urls). Runs of digits are dropped: numbers in intents ("10 commits",
// "#42") name values, not tools. Letters and digits mixed in one run stay one
// word ("k8s", "ec2", "base64").
func splitParts(s string, fn func(w string, part bool)) {
	var buf []rune
	var word []rune
	var parts []string
	flush := func() {
		if len(word) == 0 {
			return
		}
		hasLetter := false
		for _, r := range word {
			if unicode.IsLetter(r) {
				hasLetter = true
				break
			}
		}
		if hasLetter {
			parts = append(parts, string(word))
		}
		word = word[:0]
	}
	emitRun := func(run []rune) {
		// run is letters and digits; split at case changes.
		for i, r := range run {
			if i > 0 && unicode.IsUpper(r) {
				prev := run[i-1]
				next := rune(0)
				if i+1 < len(run) {
					next = run[i+1]
				}
				switch {
				case unicode.IsLower(prev) || unicode.IsDigit(prev) && len(word) > 1:
					// camelCase boundary: "listPull", "ec2Instance"
					flush()
				case unicode.IsUpper(prev) && unicode.IsLower(next) &&
					!(next == 's' && i+2 == len(run)):
					// acronym followed by a word: "HTMLParser" -> HTML|Parser,
					// but "PRs" stays whole.
					flush()
				}
			}
			word = append(word, unicode.ToLower(r))
		}
		flush()
		switch len(parts) {
		case 0:
		case 1:
			fn(parts[0], false)
		default:
			whole := strings.Join(parts, "")
			fn(whole, false)
			for _, p := range parts {
				fn(p, true)
			}
		}
		parts = parts[:0]
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			buf = append(buf, r)
			continue
		}
		if len(buf) > 0 {
			emitRun(buf)
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		emitRun(buf)
	}
}

// stopwords are function words and the filler of agent requests and code
// comments. They are dropped before any matching. Words that tell tools
// apart ("get", "list", "all", "new") are deliberately not here.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		// English function words
		"a", "about", "above", "after", "again", "against", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "down", "during", "each", "either", "else",
		"etc", "eg", "ie", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here",
		"hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it",
		"its", "itself", "just", "let", "lets", "me", "might", "more", "most", "must", "my", "myself", "no",
		"nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
		"ourselves", "out", "over", "own", "same", "shall", "she", "should", "so", "some", "such",
		"than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these",
		"they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "via",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why",
		"will", "with", "within", "without", "would", "you", "your", "yours", "yourself",
		"yourselves", "also", "whether", "may", "us", "within", "onto", "upon", "per", "s", "t",
		"d", "ll", "m", "re", "ve", "y", "o",
		// agent-request filler
		"please", "pls", "want", "wants", "need", "needs", "like", "thanks", "kindly", "someone",
		"something", "somehow", "ok", "okay", "hey",
		// code-comment markers
		"todo", "fixme", "xxx", "hack", "note", "nb", "fyi",
	} {
		m[w] = true
	}
	return m
}()

// Weights of the parts of an intent that name values rather than the task:
// in "open a GitHub issue in acme/webapp titled 'Login button misaligned'"
// the repository and the title say nothing about which tool to call, but
// their words would otherwise count as much as "open" and "issue".
const (
	wQuoted = 0.35 // 'text in quotes'
	wPath   = 0.35 // /file/paths, owner/repo, URLs, e-mail addresses
)

// intentFields splits an intent into weighted fields: the words of the
// request at weight 1, quoted strings, paths, URLs and e-mail addresses at
// lower weights. A URL also contributes the word "url" and an e-mail
// address the word "email", since tools taking them say so.
func intentFields(intent string) []field {
	var main strings.Builder
	var out []field
	rs := []rune(intent)
	isSpace := func(i int) bool { return i < 0 || i >= len(rs) || unicode.IsSpace(rs[i]) }
	for i := 0; i < len(rs); {
		r := rs[i]
		// quoted span: opening quote at a word start, closing quote at a word end
		if (r == '\'' || r == '"' || r == '`' || r == '\u2018' || r == '\u201c') && (i == 0 || !unicode.IsLetter(rs[i-1])) {
			closeQ := map[rune]rune{'\'': '\'', '"': '"', '`': '`', '\u2018': '\u2019', '\u201c': '\u201d'}[r]
			j := i + 1
			for j < len(rs) && !(rs[j] == closeQ && (j+1 >= len(rs) || !unicode.IsLetter(rs[j+1]))) {
				j++
			}
			if j < len(rs) && j-i < 400 {
				out = append(out, field{text: string(rs[i+1 : j]), weight: wQuoted})
				main.WriteByte(' ')
				i = j + 1
				continue
			}
		}
		if isSpace(i) {
			main.WriteRune(r)
			i++
			continue
		}
		// a whitespace-delimited chunk
		j := i
		for j < len(rs) && !unicode.IsSpace(rs[j]) {
			j++
		}
		chunk := string(rs[i:j])
		trimmed := strings.Trim(chunk, ".,;:!?()[]{}<>")
		switch {
		case strings.Contains(trimmed, "://") || strings.HasPrefix(trimmed, "www."):
			out = append(out, field{text: urlWords(trimmed), weight: wPath})
			main.WriteString(" url ")
		case strings.Count(trimmed, "@") == 1 && strings.Contains(trimmed[strings.IndexByte(trimmed, '@'):], ".") && !strings.HasPrefix(trimmed, "@"):
			out = append(out, field{text: trimmed, weight: wPath})
			main.WriteString(" email ")
		case isPathLike(trimmed) || isFileName(trimmed):
			out = append(out, field{text: trimmed, weight: wPath})
			if hasFileExt(trimmed) {
				main.WriteString(" file ")
			} else {
				main.WriteByte(' ')
			}
		default:
			main.WriteString(chunk)
		}
		i = j
	}
	return append([]field{{text: main.String(), weight: 1}}, out...)
}

// isPathLike reports whether a chunk of an intent is a file path or an
// owner/name pair: "/workspace/app", "~/notes.md", "./src", "acme/webapp",
// "src/main.py". Code ("a/b" inside a comment marker "//") is not: a path
// has letters on both sides of a slash.
func isPathLike(s string) bool {
	if strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/*") || strings.HasSuffix(s, "*/") {
		return false
	}
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return false
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, "./") {
		return len(s) > 1
	}
	return i > 0 && i < len(s)-1
}

// fileExts are the extensions that make a word a file name ("report.md",
// "logo.png"): an intent naming a file wants a tool that handles files.
var fileExts = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`md txt json jsonl yaml yml toml ini cfg conf env csv tsv log xml html htm css
		js mjs cjs ts tsx jsx go py rb rs java kt c h cc cpp hpp cs php sh bash zsh ps1 sql proto
		pdf png jpg jpeg gif svg webp bmp ico mp3 mp4 wav ogg webm mov avi zip gz tgz tar bz2 xz 7z
		doc docx xls xlsx ppt pptx odt rtf epub lock mod sum`) {
		fileExts[e] = true
	}
}

// hasFileExt reports whether the last path segment ends in a known
// extension.
func hasFileExt(s string) bool {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	i := strings.LastIndexByte(s, '.')
	return i > 0 && fileExts[strings.ToLower(s[i+1:])]
}

// isFileName reports whether a chunk is a bare file name: letters, digits,
// '-', '_' and dots, ending in a known extension.
func isFileName(s string) bool {
	if !hasFileExt(s) {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// urlWords keeps the words of a URL that can say something ("github" in
// https://github.com/acme/app), without the scheme and the usual host
// boilerplate.
func urlWords(u string) string {
	var keep []string
	splitWords(u, func(w string) {
		switch w {
		case "http", "https", "ftp", "www", "com", "org", "net", "io", "dev", "html", "htm", "php", "index":
		default:
			keep = append(keep, w)
		}
	})
	return strings.Join(keep, " ")
}
