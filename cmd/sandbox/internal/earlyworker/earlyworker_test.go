package earlyworker

import "testing"

func TestWanted(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"sandbox", "run", "x.ts"}, true},
		{[]string{"sandbox", "run", "--json", "x.ts"}, true},
		{[]string{"sandbox", "run", "--in-process", "x.ts"}, false}, // no worker at all
		{[]string{"sandbox", "run", "--in-process=true", "-"}, false},
		{[]string{"sandbox", "run", "--help"}, false},
		{[]string{"sandbox", "run", "--help=true"}, false},
		{[]string{"sandbox", "run", "-h"}, false},
		{[]string{"sandbox", "run", "--", "--in-process.ts"}, true}, // a file's name
		{[]string{"sandbox", "serve"}, false},                       // its pool is started by serve
		{[]string{"sandbox"}, false},
	} {
		if got := wanted(c.args); got != c.want {
			t.Errorf("%q: %v, want %v", c.args, got, c.want)
		}
	}
}
