package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandboxrt/sandbox/gateway"
)

// Configs pasted from MCP clients. Claude Desktop, Cline, Roo Code and VS
// Code write keys of their own into the same file (an approval list, a
// timeout in their own unit, a file of environment variables); VS Code names
// the servers object "servers" and adds "inputs" it prompts for. Refusing
// those would make a user edit a file that works in their client before
// sandbox reads it, so each is read with a warning that says what sandbox
// does instead (or mapped where it means the same thing: "disabled" and
// "transportType"). Every other unknown key is still an error: a typo in one
// of sandbox's own keys must not be silently ignored.

// clientServerKeys are keys clients write into a server's entry that sandbox
// ignores, each with what to do instead.
var clientServerKeys = map[string]string{
	"autoApprove":   `the tools a client runs without asking; sandbox decides that with "gateway.policy"`,
	"alwaysAllow":   `the tools a client runs without asking; sandbox decides that with "gateway.policy"`,
	"disabledTools": `tools a client hides; sandbox decides that with "gateway.policy" (a "deny" rule)`,
	"watchPaths":    "files a client watches to restart the server; sandbox restarts a server when it exits",
	"envFile":       `a file of environment variables a client reads; sandbox does not read it: put the variables in "env"`,
	"dev":           "a client's development mode; sandbox has none",
	"gallery":       "where a client installed the server from",
	"version":       "the version a client installed",
}

// clientTopLevelKeys are top-level keys of clients' config files that
// sandbox ignores.
var clientTopLevelKeys = map[string]string{
	"inputs":         `values VS Code prompts for; sandbox prompts for nothing: write ${NAME} for an environment variable instead of ${input:ID}`,
	"globalShortcut": "a Claude Desktop setting",
	"preferences":    "a Claude Desktop setting",
}

// warnAt records a warning at a position in the file.
func (p *parser) warnAt(off int64, format string, args ...any) {
	p.warnings = append(p.warnings, p.errAt(off, format, args...))
}

// clientServerKey reads a key a client wrote into server name's entry:
// known is false when no client writes it either.
func (p *parser) clientServerKey(name string, sc *gateway.ServerConfig, k jsonKey) (known bool, err error) {
	if why, ok := clientServerKeys[k.name]; ok {
		p.warnAt(k.offset, "ignoring %q in server %q: %s", k.name, name, why)
		return true, nil
	}
	switch {
	case k.name == "transportType": // Cline's older name for "type"
		return p.transportField(sc, jsonKey{name: "type", offset: k.offset, value: k.value})
	case k.name == "timeout" && k.value.kind == jsonNumber:
		p.warnAt(k.value.offset, "ignoring \"timeout\": %s in server %q: clients count it in seconds or in milliseconds; sandbox takes a duration such as \"60s\" (until then the gateway's timeout applies)", k.value.num, name)
		return true, nil
	}
	return false, nil
}

// vscodeVariable is the value of VS Code's ${workspaceFolder} (the folder
// above .vscode/, else the config's own) and ${userHome}; ok is false for
// any other name.
func (p *parser) vscodeVariable(name string) (value string, ok bool) {
	switch name {
	case "workspaceFolder":
		if p.baseDir == "" {
			return "", false
		}
		if filepath.Base(p.baseDir) == ".vscode" {
			return filepath.Dir(p.baseDir), true
		}
		return p.baseDir, true
	case "userHome":
		home, err := os.UserHomeDir()
		return home, err == nil && home != ""
	}
	return "", false
}

// clientVariable rewrites a VS Code variable in ${...} to sandbox's form:
// ${env:NAME} is ${NAME}; ${input:ID} is an error, since nothing prompts.
func clientVariable(expr string) (string, error) {
	if name, ok := strings.CutPrefix(expr, "env:"); ok {
		return name, nil
	}
	if id, ok := strings.CutPrefix(expr, "input:"); ok {
		return "", fmt.Errorf("${input:%s} is a value VS Code prompts for, and sandbox prompts for nothing: write ${NAME} and set the environment variable NAME", id)
	}
	return expr, nil
}

// renameHint suggests a name for a server whose name is a path or a URL,
// as Cline names the servers it installs from its marketplace
// ("github.com/modelcontextprotocol/servers/tree/main/src/github"): its
// last part, in normal form, when that part is a valid name.
func renameHint(name string) string {
	if !strings.Contains(name, "/") {
		return ""
	}
	trimmed := strings.TrimRight(name, "/")
	last := gateway.NormalizeName(trimmed[strings.LastIndex(trimmed, "/")+1:])
	if gateway.CheckServerName(last) != nil {
		return ""
	}
	return fmt.Sprintf(`; rename the server (its name is its namespace in snippets), e.g. %q`, last)
}
