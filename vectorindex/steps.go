package vectorindex

import (
	"regexp"
	"strings"
)

// Multi-step intents ("read the report, then post its summary to Slack")
// need one tool per step: searched as one text, the step with the most
// distinctive words wins every slot of the top k. So an intent is split
// into steps, each step is searched on its own, and the rankings are merged
// so that every step's best tools make it into the results. Several
// phrasings of one task written into one intent ("list projects |
// list_projects | get project details", a bulleted or numbered list) are
// split the same way: each is a clause of its own, and each one's best tool
// is kept in the answer.

// stepBreak matches the words and marks that end a step whatever follows
// them: ";", "then", " | ", new lines, and list markers ("- ", "* ", "• ",
// "1. " at the start of a line; "2) ", "(3) " anywhere).
var stepBreak = regexp.MustCompile(`(?i)\s*(?:;|\band then\b|,\s*then\b|\bthen\b|\bafter that\b|\bafterwards\b|\bfinally\b|\bfollowed by\b|\s->\s|\s=>\s|\s\|+\s|\n|^\s*(?:[-*\x{2022}]|\d{1,2}[.)])\s|(?:^|\s)\(?\d{1,2}\)\s)\s*`)

// maybeBreak matches "and" or a comma, which end a step only when a verb
// follows ("... and delete it", but not "a.json and b.json").
var maybeBreak = regexp.MustCompile(`(?i)(?:\s*,\s*(?:and\s+)?|\s+and\s+)`)

// maxSteps bounds the clauses of one intent (hostile intents of thousands
// of " | " are possible within MaxIntentLen): what follows the last one is
// searched with it.
const maxSteps = 8

// splitSteps splits an intent into its steps; a single-step intent comes
// back as one step.
func (a *analyzer) splitSteps(intent string) []string {
	var steps []string
	for _, line := range strings.Split(intent, "\n") {
		steps = a.appendSteps(steps, line)
	}
	if len(steps) > maxSteps {
		steps = append(steps[:maxSteps-1], strings.Join(steps[maxSteps-1:], " "))
	}
	return steps
}

// appendSteps splits one line of an intent into steps (list markers are
// read at the start of a line).
func (a *analyzer) appendSteps(steps []string, line string) []string {
	for _, part := range stepBreak.Split(line, -1) {
		for _, s := range a.splitAtVerbs(part) {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if a.contentWords(s) >= 2 {
				steps = append(steps, s)
			} else if len(steps) > 0 {
				steps[len(steps)-1] += " " + s // too short for a step: keep with the previous one
			} else if strings.TrimSpace(s) != "" {
				steps = append(steps, s)
			}
		}
	}
	return steps
}

// splitAtVerbs splits at "and" or commas that are followed by a word used
// mostly as a verb.
func (a *analyzer) splitAtVerbs(s string) []string {
	var out []string
	start := 0
	for _, m := range maybeBreak.FindAllStringIndex(s, -1) {
		rest := s[m[1]:]
		next := firstWord(rest)
		if next != "" && a.isMainlyVerb(next) {
			out = append(out, s[start:m[0]])
			start = m[1]
		}
	}
	return append(out, s[start:])
}

func firstWord(s string) string {
	s = strings.TrimLeft(s, " \t")
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-')
	})
	if end < 0 {
		end = len(s)
	}
	// "go.mod", "readme.md": a word directly followed by a dot and a letter
	// is a file name, not a verb.
	if end < len(s)-1 && s[end] == '.' && s[end+1] != ' ' {
		return ""
	}
	return strings.ToLower(s[:end])
}

func (a *analyzer) contentWords(s string) int {
	n := 0
	splitWords(s, func(w string) {
		if a.term(w) != "" {
			n++
		}
	})
	return n
}

// isMainlyVerb reports whether the word is an inflection of a verb whose
// verb senses are at least as common as its other senses.
func (a *analyzer) isMainlyVerb(w string) bool {
	lex := a.lex
	var verb, other uint32
	isVerb := false
	for _, b := range lex.Bases(w) {
		for _, s := range lex.Senses(b.Word) {
			if lex.POS(s.Synset) == 'v' {
				if b.POS == 'v' {
					isVerb = true
					verb += s.Count + 1
				}
			} else if b.POS != 'v' {
				other += s.Count + 1
			}
		}
	}
	return isVerb && verb >= other/2
}
