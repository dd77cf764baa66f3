package host

import (
	"context"
	"fmt"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
)

// Recovery is what a Core needs to carry on after its instance traps (ABI.md, "Traps"): a new
// instance gets the same init, then the history, so the tasks that were running are reconciled
// and tracked again, and their notices still come.
type Recovery struct {
	// Source reads what the new instance is restored from: the history's index and log as their
	// files hold them, and the model health. Nil: the new instance starts empty.
	Source func() (index, history []byte, state string, err error)
	// Effects carries out what the restore asks (the reconcile's reads, timers). It is called
	// after the failed call's lock is released, before that call returns.
	Effects func(ctx context.Context, effects []core.Effect)
	// Log hears the trap and what came of it (nil: nowhere).
	Log func(message string)
}

// OnTrap sets how this Core recovers from a trap.
func (c *Core) OnTrap(r Recovery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recovery = r
}

// Halted is the text every call fails with once the core stopped for good ("" while it runs).
func (c *Core) Halted() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.halted
}

// restartFailed is the host's own rule, the same in both hosts (ABI.md): a new instance that
// cannot be made, initialised or restored cannot be asked what to do, so the core stops.
func restartFailed(err error) string {
	return fmt.Sprintf("asyncagents stopped: its core failed, and failed again while restarting (%v). Background tasks are no longer tracked; restart OpenCode to start it again.", err)
}

// recoverLocked replaces the trapped instance, with c.mu held, and returns what the failed call
// answers and the restore's effects. What a restart means (a loop or not, the words) is the new
// core's decision, given every trap still kept.
func (c *Core) recoverLocked(ctx context.Context, trap error) (string, []core.Effect) {
	log := c.recovery.Log
	if log == nil {
		log = func(string) {}
	}
	now := time.Now().UnixMilli()
	log("asyncagents: the core trapped; making a new instance: " + trap.Error())
	_ = c.mod.Close(ctx)
	c.traps = append(c.traps, core.Trap{At: now, Error: trap.Error()})
	halt := func(message string) (string, []core.Effect) {
		c.halted = message
		_ = c.mod.Close(ctx)
		log(message)
		return message, nil
	}
	if err := c.instantiate(ctx); err != nil {
		return halt(restartFailed(err))
	}
	cfg := c.cfg
	init, err := c.doLocked(ctx, abi.Request{Op: "init", Config: &cfg, ConfigFiles: c.files, Seed: newSeed(), Traps: c.traps})
	if err != nil || init.Recovery == nil {
		return halt(restartFailed(fmt.Errorf("init: %v", err)))
	}
	if init.Recovery.Halt {
		return halt(init.Recovery.Message)
	}
	c.traps = init.Recovery.Traps
	var effects []core.Effect
	if c.recovery.Source != nil {
		index, history, state, err := c.recovery.Source()
		if err != nil {
			return halt(restartFailed(fmt.Errorf("reading the history: %v", err)))
		}
		r, err := c.doLocked(ctx, abi.Request{Op: "restore", Now: now, State: state, IndexLen: len(index)}, index, history)
		if err != nil {
			return halt(restartFailed(fmt.Errorf("restore: %v", err)))
		}
		effects = r.Effects
	}
	log(init.Recovery.Message)
	return init.Recovery.Message, effects
}
