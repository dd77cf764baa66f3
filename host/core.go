package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Core is one instance of the core module. Calls are serialised: the guest is single-threaded.
type Core struct {
	mu                      sync.Mutex
	mod                     api.Module
	alloc, free, call, vers api.Function
}

var instanceSeq atomic.Int64

// ErrABIMismatch is wrapped by New when the module speaks another ABI version than this host.
var ErrABIMismatch = errors.New("ABI version mismatch")

// New instantiates the module (running _initialize) and checks its ABI version.
func (m *Module) New(ctx context.Context) (*Core, error) {
	cfg := wazero.NewModuleConfig().
		WithName(fmt.Sprintf("asyncagents-%d", instanceSeq.Add(1))).
		WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime()
	mod, err := m.rt.InstantiateModule(withMemory(ctx), m.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("asyncagents host: instantiate: %w", err)
	}
	c := &Core{
		mod:   mod,
		alloc: mod.ExportedFunction("aa_alloc"),
		free:  mod.ExportedFunction("aa_free"),
		call:  mod.ExportedFunction("aa_call"),
		vers:  mod.ExportedFunction("aa_abi_version"),
	}
	if c.alloc == nil || c.free == nil || c.call == nil || c.vers == nil {
		mod.Close(ctx)
		return nil, errors.New("asyncagents host: the module lacks the aa_* exports; is it the asyncagents core?")
	}
	res, err := c.vers.Call(ctx)
	if err != nil {
		mod.Close(ctx)
		return nil, fmt.Errorf("asyncagents host: aa_abi_version: %w", err)
	}
	if got := uint32(res[0]); got != ABIVersion {
		mod.Close(ctx)
		return nil, fmt.Errorf("asyncagents host: module ABI %d, host ABI %d: %w", got, ABIVersion, ErrABIMismatch)
	}
	return c, nil
}

// Call sends one raw JSON request envelope and returns the raw response envelope. An error means
// the instance trapped or its memory was unreadable; the instance is then unusable.
func (c *Core) Call(ctx context.Context, req []byte) ([]byte, error) {
	return c.callWithBody(ctx, req)
}

// callWithBody sends the envelope env, followed by a NUL and the parts of body one after
// another when there are any (ABI.md), written straight into the core's memory: a 10 MB history
// is copied once, not joined to env first.
func (c *Core) callWithBody(ctx context.Context, env []byte, body ...[]byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := len(env)
	if len(body) > 0 {
		size++
		for _, part := range body {
			size += len(part)
		}
	}
	if size > math.MaxUint32 {
		return nil, fmt.Errorf("a request of %d bytes is more than the core's 32-bit memory can take", size)
	}
	res, err := c.alloc.Call(ctx, uint64(size))
	if err != nil {
		return nil, fmt.Errorf("aa_alloc: %w", err)
	}
	in := uint32(res[0])
	into, ok := c.mod.Memory().Read(in, uint32(size))
	if !ok {
		return nil, errors.New("aa_alloc returned a buffer outside memory")
	}
	n := copy(into, env)
	if len(body) > 0 {
		into[n] = 0
		n++
		for _, part := range body {
			n += copy(into[n:], part)
		}
	}
	res, err = c.call.Call(ctx, uint64(in), uint64(size))
	if err != nil {
		return nil, fmt.Errorf("aa_call: %w", err)
	}
	out, outSize := uint32(res[0]>>32), uint32(res[0])
	view, ok := c.mod.Memory().Read(out, outSize)
	if !ok {
		return nil, errors.New("aa_call returned a response outside memory")
	}
	resp := append([]byte(nil), view...)
	if _, err := c.free.Call(ctx, uint64(in)); err != nil {
		return nil, fmt.Errorf("aa_free: %w", err)
	}
	if _, err := c.free.Call(ctx, uint64(out)); err != nil {
		return nil, fmt.Errorf("aa_free: %w", err)
	}
	return resp, nil
}

// MemoryBytes is the size of the instance's linear memory: what the core holds, and at most what
// it held at once.
func (c *Core) MemoryBytes() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mod.Memory().Size()
}

// Close releases the instance.
func (c *Core) Close(ctx context.Context) error { return c.mod.Close(ctx) }
