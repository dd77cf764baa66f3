package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/asyncagents/asyncagents/core"
)

// WriteServerFile writes a server file atomically: a temporary file (mode 0600: it holds the
// token) renamed over path, so a reader sees the old file or the new one, never half of one.
func WriteServerFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // a leftover temporary file kept its own mode
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// RemoveServerFile removes path only while it holds what its owner wrote (content): a file
// another process wrote since (the same pid, reused after this one ended) is not this owner's.
func RemoveServerFile(path, content string) error {
	now, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(now, []byte(content)) {
		return nil
	}
	return os.Remove(path)
}

// LiveServers reads a project's server files and returns those whose writer still runs, in
// core.SortServers's order (the first is the one a command talks to). Stale files (their process is gone, or their pid now runs
// another process) and unreadable ones are skipped.
func LiveServers(serverDir string) ([]core.ServerFile, error) {
	entries, err := os.ReadDir(serverDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var live []core.ServerFile
	for _, e := range entries {
		name := e.Name()
		if filepath.Ext(name) != ".json" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(serverDir, name))
		if err != nil {
			continue
		}
		f, err := core.ParseServerFile(raw)
		if err != nil || strconv.Itoa(f.PID)+".json" != name {
			continue
		}
		running, start := ProcStart(f.PID)
		if f.Live(running, start) {
			live = append(live, f)
		}
	}
	core.SortServers(live)
	return live, nil
}
