package gateway_test

import (
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/typegen"
)

// TestReservedServerNamesAreRefusedEveryWay: a server may not take a name
// something else owns, whichever way it is added. An in-process server
// named sandbox used to be accepted and bound as sandbox_ in snippets,
// where every call then failed as "not a sandbox service".
func TestReservedServerNamesAreRefusedEveryWay(t *testing.T) {
	t.Parallel()
	for name, owner := range map[string]string{
		"gateway": "the gateway's own hub tools",
		"sandbox": "code mode's sandbox global",
		"scripts": "code mode's saved scripts",
	} {
		want := `server name "` + name + `" is reserved for ` + owner
		_, err := gateway.New(nil, gateway.WithInProcessServer(name, testserver.New(), nil))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "rename the server") {
			t.Errorf("WithInProcessServer(%q): %v, want %q and what to do", name, err, want)
		}
		cfg := &gateway.Config{Servers: map[string]*gateway.ServerConfig{
			name: {Name: name, Transport: gateway.TransportStdio, Command: "true"},
		}, Settings: gateway.DefaultSettings()}
		if _, err := gateway.New(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a Config with server %q: %v, want %q", name, err, want)
		}
	}
}

// TestCodeModeNamespacesAreReservedServerNames: the names code mode gives
// its own namespaces in a snippet are the ones the gateway refuses.
func TestCodeModeNamespacesAreReservedServerNames(t *testing.T) {
	t.Parallel()
	for _, ns := range []string{codemode.ScriptNamespace, "sandbox"} {
		if err := gateway.CheckServerName(ns); err == nil {
			t.Errorf("code mode's namespace %q is not a reserved server name", ns)
		}
	}
}

// TestNamesThatReadAsCodeModesNamespacesAreRefused: a server whose name
// is a reserved one with separators around it ("scripts_", "-scripts")
// would get the reserved namespace in a snippet (typegen drops the
// separators), its tools mixed with the saved scripts; it is refused too.
func TestNamesThatReadAsCodeModesNamespacesAreRefused(t *testing.T) {
	t.Parallel()
	for _, ns := range []string{codemode.ScriptNamespace, "sandbox", "gateway"} {
		for _, name := range []string{ns + "_", "_" + ns, ns + "-", "-" + ns, "__" + ns + "__", ns + "-_"} {
			if err := gateway.CheckServerName(name); err == nil || !strings.Contains(err.Error(), "reserved") {
				t.Errorf("CheckServerName(%q) = %v (its namespace: %q)", name, err, typegen.NamespaceOf(name))
			}
		}
	}
	for _, name := range []string{"scripts1", "s-cripts", "my-scripts", "sandboxes"} {
		if err := gateway.CheckServerName(name); err != nil {
			t.Errorf("CheckServerName(%q) = %v", name, err)
		}
	}
}

// TestServerNamesInGoConfigsAreChecked: a Config built in Go is held to the
// rules mcp.json is: names in normal form, and each ServerConfig named as
// its key (a mismatch used to register the server under the other name).
func TestServerNamesInGoConfigsAreChecked(t *testing.T) {
	t.Parallel()
	for key, sc := range map[string]*gateway.ServerConfig{
		"GitHub": {Name: "GitHub", Transport: gateway.TransportStdio, Command: "true"},
		"a/b":    {Name: "a/b", Transport: gateway.TransportStdio, Command: "true"},
		"fs":     {Name: "files", Transport: gateway.TransportStdio, Command: "true"},
		"empty":  {Transport: gateway.TransportStdio, Command: "true"},
		"none":   nil,
	} {
		cfg := &gateway.Config{Servers: map[string]*gateway.ServerConfig{key: sc}, Settings: gateway.DefaultSettings()}
		if _, err := gateway.New(cfg); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("server %q (%+v): %v, want an error naming it", key, sc, err)
		}
	}
	if err := gateway.CheckServerName("GitHub"); err == nil || !strings.Contains(err.Error(), `use "github"`) {
		t.Errorf("CheckServerName(GitHub) = %v, want the normal form to use", err)
	}
}
