package jsenv

import "testing"

func TestMentions(t *testing.T) {
	for _, c := range []struct {
		code  string
		names []string
		want  bool
	}{
		{"new URL(x)", []string{"URL"}, true},
		{"typeof URL", []string{"URL"}, true},
		{`globalThis["URL"]`, []string{"URL"}, true},
		{"URL", []string{"URL"}, true},
		{"//# sourceMappingURL=data:...", []string{"URL"}, false},
		{"const myURL = 1; const URLs = 2", []string{"URL"}, false},
		{"new URLSearchParams()", []string{"URL"}, false},
		{"new URLSearchParams()", []string{"URL", "URLSearchParams"}, true},
		{"$URL + _URL", []string{"URL"}, false},
		{"xs.values().map(f)", []string{".values()"}, true},
		{"function* gen() {}", []string{"function*"}, true},
		{"function gen() {}", []string{"function*"}, false},
		{"d.toLocaleDateString()", []string{"toLocaleString", "toLocaleDateString"}, true},
		{"s.toLocaleUpperCase()", []string{"toLocaleString", "toLocaleDateString"}, false},
		{"", []string{"URL"}, false},
		{"URL URL", nil, false},
	} {
		if got := Mentions(c.code, c.names); got != c.want {
			t.Errorf("Mentions(%q, %q) = %v, want %v", c.code, c.names, got, c.want)
		}
	}
}
