package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
)

// ReadConfigFiles reads the config file candidates the storage op named that exist, in order;
// one that exists but cannot be read is passed with its error. What they mean, and whether they
// are valid, is the core's call (core/config/file.go): this only reads, as the plugin does.
func ReadConfigFiles(paths []string) []config.ConfigFile {
	var files []config.ConfigFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		switch {
		case err == nil:
			files = append(files, config.ConfigFile{Path: p, Text: string(b)})
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		default:
			files = append(files, config.ConfigFile{Path: p, Error: err.Error()})
		}
	}
	return files
}

// InitWith is Init with the config files layered over cfg by the core; a new instance made after
// a trap gets both again. An invalid file is the answer's ConfigError, not an error.
func (c *Core) InitWith(ctx context.Context, cfg config.Config, files []config.ConfigFile) (abi.Response, error) {
	c.mu.Lock()
	c.cfg, c.files = cfg, files
	c.mu.Unlock()
	return c.Do(ctx, abi.Request{Op: "init", Config: &cfg, ConfigFiles: files, Seed: newSeed()})
}
