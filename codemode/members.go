package codemode

import (
	"iter"
	"strings"
)

// memberAccesses yields every `a.b` (and `a?.b`, with any whitespace
// around the dot) in source text, chains included: `x.github.listCommits`
// yields x.github and github.listCommits. free says that a is not itself a
// member (no single dot before it), so that it can only be a global: a
// namespace. Text in strings and comments counts too; this is a scan of
// the text, not a parse. It replaced a regular expression whose
// non-overlapping matches missed the second pair of every chain, and cost
// ~20 µs on a trivial snippet.
func memberAccesses(code string) iter.Seq2[[2]string, bool] {
	return func(yield func([2]string, bool) bool) {
		for off := 0; ; {
			i := strings.IndexByte(code[off:], '.')
			if i < 0 {
				return
			}
			dot := off + i
			off = dot + 1
			start, end := identBefore(code, dot)
			if start == end {
				continue
			}
			mStart := skipSpace(code, dot+1)
			mEnd := identEnd(code, mStart)
			if mEnd == mStart {
				continue
			}
			if !yield([2]string{code[start:end], code[mStart:mEnd]}, !afterMemberDot(code, start)) {
				return
			}
		}
	}
}

// identBefore finds the identifier that ends before the dot at code[dot],
// past an optional '?' and whitespace: [start, end), empty if none.
func identBefore(code string, dot int) (start, end int) {
	end = dot
	if end > 0 && code[end-1] == '?' {
		end--
	}
	for end > 0 && isSpace(code[end-1]) {
		end--
	}
	start = end
	for start > 0 && isIdentByte(code[start-1]) {
		start--
	}
	// An identifier starts with a letter, '_' or '$': digits before one
	// are not part of it ("1abc" holds "abc").
	for start < end && code[start] >= '0' && code[start] <= '9' {
		start++
	}
	return start, end
}

// identEnd is the end of the identifier starting at code[i] (i when none
// starts there).
func identEnd(code string, i int) int {
	if i >= len(code) || !isIdentByte(code[i]) || (code[i] >= '0' && code[i] <= '9') {
		return i
	}
	for i < len(code) && isIdentByte(code[i]) {
		i++
	}
	return i
}

// afterMemberDot reports whether the identifier at code[start] follows a
// member-access dot (whitespace and '?' allowed), not a spread's "...".
// Newlines count as whitespace, as chains span lines; so a name that
// starts a line after a comment ending in "1." or ")." reads as a member
// and is not guessed as a namespace (a misspelling there is then a
// ReferenceError rather than an UNKNOWN_TOOL with a suggestion).
func afterMemberDot(code string, start int) bool {
	i := start
	for i > 0 && isSpace(code[i-1]) {
		i--
	}
	if i == 0 || code[i-1] != '.' {
		return false
	}
	return i < 2 || code[i-2] != '.'
}

func skipSpace(code string, i int) int {
	for i < len(code) && isSpace(code[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
