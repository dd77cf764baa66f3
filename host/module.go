// Package host runs the asyncagents core (the .wasm built from ../wasm) under wazero and offers
// it as a typed Go API. It is the Go twin of ../bridge: the HTTP server, the CLI and the Go tests
// run the very module the OpenCode plugin loads.
package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Module is a compiled core module. Compiling a few-MB module takes seconds, so a process
// compiles it once and instantiates it as often as it needs (one instance per Core).
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
}

var (
	cacheOnce sync.Once
	cache     wazero.CompilationCache
)

// compilationCache is shared by every runtime of the process and kept on disk, so the second
// process (the next test binary, the next CLI run) skips compilation too.
func compilationCache() wazero.CompilationCache {
	cacheOnce.Do(func() {
		dir, err := os.UserCacheDir()
		if err == nil {
			cache, err = wazero.NewCompilationCacheWithDir(filepath.Join(dir, "asyncagents", "wazero"))
		}
		if err != nil || cache == nil {
			cache = wazero.NewCompilationCache()
		}
	})
	return cache
}

// Compile compiles the module bytes.
func Compile(ctx context.Context, wasm []byte) (*Module, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compilationCache()))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("asyncagents host: WASI: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("asyncagents host: compile: %w", err)
	}
	return &Module{rt: rt, compiled: compiled}, nil
}

// CompileFile compiles the module at path.
func CompileFile(ctx context.Context, path string) (*Module, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("asyncagents host: %w", err)
	}
	return Compile(ctx, wasm)
}

// Close releases the runtime and every instance made from it.
func (m *Module) Close(ctx context.Context) error { return m.rt.Close(ctx) }
