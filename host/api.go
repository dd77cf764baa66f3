package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// ABIVersion is the envelope version this host speaks.
const ABIVersion = abi.ABIVersion

// Typed calls over the envelope. Each returns the core's own error text when it says ok: false.

// Do sends a typed request and decodes the typed response.
func (c *Core) Do(ctx context.Context, q abi.Request) (abi.Response, error) {
	return c.DoHistory(ctx, q, bytesOf(q.History))
}

// bytesOf reads s in place: callWithBody only copies it into the core's memory.
func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// DoHistory is Do for a request that carries a history (restore, follow) held as bytes, as read
// from the file: it reaches the core's memory in one copy, with no string made of it first. The
// history is this argument alone; q.History is not sent. A restore's index (q.Index) goes just
// before it.
func (c *Core) DoHistory(ctx context.Context, q abi.Request, history []byte) (abi.Response, error) {
	return c.DoRestore(ctx, q, bytesOf(q.Index), history)
}

// DoRestore is DoHistory with the history index as bytes too, as read from its file.
func (c *Core) DoRestore(ctx context.Context, q abi.Request, index, history []byte) (abi.Response, error) {
	q.History, q.Index, q.IndexLen = "", "", len(index)
	if len(index)+len(history) == 0 {
		return c.do(ctx, q) // no body at all
	}
	return c.do(ctx, q, index, history)
}

func (c *Core) do(ctx context.Context, q abi.Request, body ...[]byte) (abi.Response, error) {
	return c.send(ctx, c.callWithBody, q, body...)
}

// doLocked is do with c.mu held, on the current instance, with no recovery: the recovery's own
// calls.
func (c *Core) doLocked(ctx context.Context, q abi.Request, body ...[]byte) (abi.Response, error) {
	return c.send(ctx, c.callLocked, q, body...)
}

func (c *Core) send(ctx context.Context, call func(context.Context, []byte, ...[]byte) ([]byte, error), q abi.Request, body ...[]byte) (abi.Response, error) {
	env, err := json.Marshal(q)
	if err != nil {
		return abi.Response{}, err
	}
	// The history travels raw after a NUL byte, not escaped inside the JSON, the index before
	// it (ABI.md).
	raw, err := call(ctx, env, body...)
	if err != nil {
		return abi.Response{}, err
	}
	r, err := abi.DecodeResponse(raw)
	if err != nil {
		return abi.Response{}, err
	}
	if !r.OK {
		return r, errors.New(r.Error)
	}
	return r, nil
}

// Init (re)starts the machine with cfg and returns the tools and event types it wants. The seed
// (random, per call) keeps the task IDs this core mints apart from another process's.
// A new instance made after a trap is initialised with the same cfg (recover.go).
func (c *Core) Init(ctx context.Context, cfg config.Config) (abi.Response, error) {
	c.mu.Lock()
	c.cfg, c.files = cfg, nil
	c.mu.Unlock()
	return c.Do(ctx, abi.Request{Op: "init", Config: &cfg, Seed: newSeed()})
}

// newSeed is random per init: a new instance's task IDs must not repeat the last one's.
func newSeed() string {
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	return hex.EncodeToString(seed[:])
}

// Step feeds one event at time now (Unix ms) and returns the effects to carry out.
func (c *Core) Step(ctx context.Context, now int64, ev core.Event) ([]core.Effect, error) {
	r, err := c.Do(ctx, abi.Request{Op: "step", Now: now, Event: &ev})
	return r.Effects, err
}

// Tasks returns every task the machine holds.
func (c *Core) Tasks(ctx context.Context) ([]task.Task, error) {
	r, err := c.Do(ctx, abi.Request{Op: "tasks"})
	return r.Tasks, err
}
