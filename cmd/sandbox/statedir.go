package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/sandboxrt/sandbox/config"
)

// Where code mode keeps what agents save (saved scripts, sandbox.store,
// usage) when the config names no "codeMode.dataDir": a per-user state
// directory, as the XDG base directory spec says, so that a restart of
// serve keeps them. In memory, a restart lost them, and nothing said so.

// defaultDataDir is $XDG_STATE_HOME/sandbox, else ~/.local/state/sandbox.
func defaultDataDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) { // the spec ignores a relative one
		return filepath.Join(d, "sandbox"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("neither XDG_STATE_HOME nor HOME is set")
	}
	return filepath.Join(home, ".local", "state", "sandbox"), nil
}

// useDataDir settles serve's data directory and says where it is: the
// config's, else the per-user default, created (0700: what agents saved is
// private to the user). When no default can be had (no HOME, a read-only
// one, as in some containers) what agents save stays in memory, and the log
// says so and how to keep it.
func useDataDir(cm *config.CodeMode, log *slog.Logger) {
	if dir := cm.Engine.DataDir; dir != "" {
		log.Info("code mode keeps saved scripts and sandbox.store in "+dir, "dataDir", dir)
		return
	}
	dir, err := defaultDataDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		log.Warn(`saved scripts and sandbox.store stay in memory and end with this process: no per-user state directory (`+err.Error()+`); set "dataDir" in the config's "codeMode" block to keep them`, "error", err)
		return
	}
	cm.Engine.DataDir = dir
	log.Info("code mode keeps saved scripts and sandbox.store in "+dir+` (the per-user default; "codeMode.dataDir" in the config chooses another)`, "dataDir", dir)
}
