package codemode

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/runtime"
)

// notInDescriptionYet are the runtime's globals execute_code's description
// does not name today. The list may only shrink: a global added to the
// runtime must be named in the description, and one the description comes
// to name must leave this list.
var notInDescriptionYet = map[string]bool{
	"clearTimeout":         true, // the text says setTimeout/setInterval
	"clearInterval":        true,
	"Iterator":             true, // the text says "iterator helpers"
	"WeakRef":              true,
	"FinalizationRegistry": true,
}

// TestExecuteDescriptionNamesEveryGlobal: every global the runtime adds to a
// snippet (runtime.Globals, the runtime's one registry of them) is named in
// execute_code's description, among the globals a snippet has, or after
// "Not there:" when it only refuses (fetch), so the list agents read cannot
// drift from what the runtime installs.
// TestExecuteDescriptionListsTheGlobals checks the other way.
func TestExecuteDescriptionNamesEveryGlobal(t *testing.T) {
	_, list, ok := strings.Cut(executeDescription, "Globals besides the language: ")
	if !ok {
		t.Fatal("the description lists no globals")
	}
	has, absent, ok := strings.Cut(list, "Not there: ")
	if !ok {
		t.Fatal(`the description has no "Not there:" list`)
	}
	absent, _, _ = strings.Cut(absent, ". ")
	named := func(text, name string) bool {
		return regexp.MustCompile(`(^|[^\w$])` + regexp.QuoteMeta(name) + `($|[^\w$])`).MatchString(text)
	}
	globals := runtime.Globals()
	if len(globals) < 20 {
		t.Fatalf("runtime.Globals lists only %d globals", len(globals))
	}
	registry := map[string]bool{}
	for _, g := range globals {
		registry[g.Name] = true
		switch {
		case g.Refusal && !named(absent, g.Name):
			t.Errorf("%s (family %s) only refuses; the description must name it after \"Not there:\"", g.Name, g.Family)
		case !g.Refusal && notInDescriptionYet[g.Name] && named(has, g.Name):
			t.Errorf("the description now names %s: take it out of notInDescriptionYet", g.Name)
		case !g.Refusal && !notInDescriptionYet[g.Name] && !named(has, g.Name):
			t.Errorf("%s (family %s) is a global of every run that names it, but execute_code's description does not name it", g.Name, g.Family)
		}
	}
	for name := range notInDescriptionYet {
		if !registry[name] {
			t.Errorf("notInDescriptionYet names %s, which runtime.Globals does not list", name)
		}
	}
}
