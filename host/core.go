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

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
)

// Core is one instance of the core module. Calls are serialised: the guest is single-threaded.
// After a trap the instance is replaced (recover.go); the Core stays the caller's handle.
type Core struct {
	mu                      sync.Mutex
	m                       *Module
	mod                     api.Module
	alloc, free, call, vers api.Function

	cfg      config.Config       // as Init last passed it: a new instance gets it again
	files    []config.ConfigFile // the config files InitWith passed, for a new instance too
	recovery Recovery
	traps    []core.Trap // those the last recovery said to keep
	halted   string      // once set, every call fails with it
}

var instanceSeq atomic.Int64

// ErrABIMismatch is wrapped by New when the module speaks another ABI version than this host.
var ErrABIMismatch = errors.New("ABI version mismatch")

// New instantiates the module (running _initialize) and checks its ABI version.
func (m *Module) New(ctx context.Context) (*Core, error) {
	c := &Core{m: m}
	if err := c.instantiate(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// instantiate makes a new instance of the module the Core's.
func (c *Core) instantiate(ctx context.Context) error {
	m := c.m
	cfg := wazero.NewModuleConfig().
		WithName(fmt.Sprintf("asyncagents-%d", instanceSeq.Add(1))).
		WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime()
	mod, err := m.rt.InstantiateModule(withMemory(ctx), m.compiled, cfg)
	if err != nil {
		return fmt.Errorf("asyncagents host: instantiate: %w", err)
	}
	alloc, free := mod.ExportedFunction("aa_alloc"), mod.ExportedFunction("aa_free")
	call, vers := mod.ExportedFunction("aa_call"), mod.ExportedFunction("aa_abi_version")
	if alloc == nil || free == nil || call == nil || vers == nil {
		mod.Close(ctx)
		return errors.New("asyncagents host: the module lacks the aa_* exports; is it the asyncagents core?")
	}
	res, err := vers.Call(ctx)
	if err != nil {
		mod.Close(ctx)
		return fmt.Errorf("asyncagents host: aa_abi_version: %w", err)
	}
	if got := uint32(res[0]); got != ABIVersion {
		mod.Close(ctx)
		return fmt.Errorf("asyncagents host: module ABI %d, host ABI %d: %w", got, ABIVersion, ErrABIMismatch)
	}
	c.mod, c.alloc, c.free, c.call, c.vers = mod, alloc, free, call, vers
	return nil
}

// Call sends one raw JSON request envelope and returns the raw response envelope. An error means
// the instance trapped (it was then replaced, see recover.go) or its memory was unreadable.
func (c *Core) Call(ctx context.Context, req []byte) ([]byte, error) {
	return c.callWithBody(ctx, req)
}

// callWithBody sends the envelope env, followed by a NUL and the parts of body one after
// another when there are any (ABI.md), written straight into the core's memory: a 10 MB history
// is copied once, not joined to env first. A trap costs this call: the call fails with the
// recovery's message, and a new instance answers the next.
func (c *Core) callWithBody(ctx context.Context, env []byte, body ...[]byte) ([]byte, error) {
	c.mu.Lock()
	if c.halted != "" {
		c.mu.Unlock()
		return nil, errors.New(c.halted)
	}
	resp, err := c.callLocked(ctx, env, body...)
	if !errors.Is(err, errTrap) {
		c.mu.Unlock()
		return resp, err
	}
	message, effects := c.recoverLocked(context.WithoutCancel(ctx), err)
	c.mu.Unlock()
	if len(effects) > 0 && c.recovery.Effects != nil {
		c.recovery.Effects(context.WithoutCancel(ctx), effects)
	}
	return nil, errors.New(message)
}

// errTrap marks a failure of the instance itself: a trap, or memory it handed over that cannot
// be read.
var errTrap = errors.New("core trap")

func trapped(what string, err error) error { return fmt.Errorf("%w: %s: %v", errTrap, what, err) }

// callLocked is callWithBody on the current instance, with c.mu held.
func (c *Core) callLocked(ctx context.Context, env []byte, body ...[]byte) ([]byte, error) {
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
		return nil, trapped("aa_alloc", err)
	}
	in := uint32(res[0])
	into, ok := c.mod.Memory().Read(in, uint32(size))
	if !ok {
		return nil, trapped("aa_alloc", errors.New("a buffer outside memory"))
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
		return nil, trapped("aa_call", err)
	}
	out, outSize := uint32(res[0]>>32), uint32(res[0])
	view, ok := c.mod.Memory().Read(out, outSize)
	if !ok {
		return nil, trapped("aa_call", errors.New("a response outside memory"))
	}
	resp := append([]byte(nil), view...)
	if _, err := c.free.Call(ctx, uint64(in)); err != nil {
		return nil, trapped("aa_free", err)
	}
	if _, err := c.free.Call(ctx, uint64(out)); err != nil {
		return nil, trapped("aa_free", err)
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
func (c *Core) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mod.Close(ctx)
}
