package auth

import (
	"slices"
	"testing"
)

func TestAllowedServers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		p          Principal
		servers    []string
		restricted bool
		sees       map[string]bool
	}{
		{"operator sees all", Operator(), nil, false, map[string]bool{"fs": true, "github": true}},
		{"scopes without servers see all", Principal{ID: "a", Scopes: []string{"tools:call"}}, nil, false, map[string]bool{"fs": true}},
		{"server scopes restrict", Principal{ID: "a", Scopes: []string{"tools:call", ServerScope("fs"), ServerScope("github")}},
			[]string{"fs", "github"}, true, map[string]bool{"fs": true, "github": true, "memory": false, "": false}},
		{"prefix only is an empty name", Principal{ID: "a", Scopes: []string{"server:"}}, []string{""}, true, map[string]bool{"fs": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers, restricted := tc.p.AllowedServers()
			if !slices.Equal(servers, tc.servers) || restricted != tc.restricted {
				t.Errorf("AllowedServers() = %q, %v; want %q, %v", servers, restricted, tc.servers, tc.restricted)
			}
			for server, want := range tc.sees {
				if got := tc.p.MaySee(server); got != want {
					t.Errorf("MaySee(%q) = %v, want %v", server, got, want)
				}
			}
		})
	}
}
