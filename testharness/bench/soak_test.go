package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

const (
	// soakTasks go through the core; soakEvery is the sampling period, soakFlat the share within
	// which the last five samples must lie of each other for memory to count as flat.
	soakTasks = 10_000
	soakEvery = 1_000
	soakFlat  = 0.10
	// soakKeep is history.maxTasks for the run: the store reaches its bound a tenth of the way
	// in, so the later samples show whether anything else grows.
	soakKeep = 1_000
)

// soak drives one core on the Go host the way OpenCode would: each task is launched by a tool
// call from a parent session (ten tasks per parent, each parent's model announced), its child
// uses a tool, answers and goes idle, and every effect that wants an answer gets one.
type soak struct {
	ctx  context.Context
	c    *host.Core
	now  int64
	seq  int
	fail func(string, ...any)
}

func (s *soak) step(ev core.Event) {
	s.now += 10
	queue, err := s.c.Step(s.ctx, s.now, ev)
	if err != nil {
		s.fail("step: %v", err)
	}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if !e.Reply {
			continue
		}
		done := core.Event{Type: core.EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage("null")}
		switch e.Kind {
		case core.EffectAgentsList:
			done.Result = json.RawMessage(`[{"name":"general","mode":"subagent"}]`)
		case core.EffectSessionCreate:
			s.seq++
			done.Result = json.RawMessage(fmt.Sprintf(`{"id":"ses_child%d"}`, s.seq))
		case core.EffectStatus:
			done.Result = json.RawMessage(`{}`)
		}
		more, err := s.c.Step(s.ctx, s.now, done)
		if err != nil {
			s.fail("effect.done: %v", err)
		}
		queue = append(queue, more...)
	}
}

func (s *soak) oc(typ, props string) {
	s.step(core.Event{Type: core.EventOpenCode, Event: &core.OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// task runs task i from its launch to its notice.
func (s *soak) task(i int) {
	parent := fmt.Sprintf("ses_parent%d", i/10)
	s.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_p%d","sessionID":%q,"role":"assistant","providerID":"mock","modelID":"mock-a","time":{"created":%d}}}`, i, parent, s.now))
	s.step(core.Event{Type: core.EventToolCall, CallID: fmt.Sprintf("call%d", i), Tool: core.ToolTask, SessionID: parent, MessageID: fmt.Sprintf("msg_p%d", i), Agent: "build",
		Args: json.RawMessage(`{"description":"soak","prompt":"work","agent":"general"}`)})
	child := fmt.Sprintf("ses_child%d", s.seq)
	msg := fmt.Sprintf("msg_c%d", i)
	s.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, child))
	s.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t%d","sessionID":%q,"messageID":%q,"type":"tool","callID":"tc%d","tool":"read","state":{"status":"running"}}}`, i, child, msg, i))
	s.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t%d","sessionID":%q,"messageID":%q,"type":"tool","callID":"tc%d","tool":"read","state":{"status":"completed"}}}`, i, child, msg, i))
	created := s.now + 1
	s.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_x%d","sessionID":%q,"messageID":%q,"type":"text","text":"done %d","time":{"end":%d}}}`, i, child, msg, i, created+1))
	s.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msg, child, created, created+1))
	s.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, child))
}

// BenchmarkSoak pushes 10,000 tasks through the core on the Go host and samples the Go heap and
// the WebAssembly memory every 1,000: memory is flat when the last five samples of each lie
// within 10 % of each other. The store is bounded by history.maxTasks (1,000 here), so what the
// samples show past that is everything else the core keeps.
func BenchmarkSoak(b *testing.B) {
	ctx := context.Background()
	wasm := filepath.Join(ocserve.RepoRoot(b), "dist", "asyncagents.wasm")
	for n := 0; n < b.N; n++ {
		m, err := host.CompileFile(ctx, wasm)
		if err != nil {
			b.Fatalf("compiling %s (make build first): %v", wasm, err)
		}
		c, err := m.New(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Init(ctx, config.Config{History: config.HistoryConfig{MaxTasks: soakKeep}}); err != nil {
			b.Fatal(err)
		}
		s := &soak{ctx: ctx, c: c, now: 1_000_000, fail: b.Fatalf}
		s.step(core.Event{Type: core.EventStart})
		var heap, wasmMem []float64
		for i := 0; i < soakTasks; i++ {
			s.task(i)
			if (i+1)%soakEvery == 0 {
				s.step(core.Event{Type: core.EventTimer, TimerID: core.HeartbeatTimer})
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = append(heap, float64(ms.HeapAlloc))
				wasmMem = append(wasmMem, float64(c.MemoryBytes()))
			}
		}
		tasks, err := c.Tasks(ctx)
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Close(ctx)
		heapFlat, wasmFlat := flat(heap), flat(wasmMem)
		b.ReportMetric(heap[len(heap)-1]/(1<<20), "go-heap-MiB")
		b.ReportMetric(wasmMem[len(wasmMem)-1]/(1<<20), "wasm-memory-MiB")
		fmt.Printf("\nsoak: %d tasks through the core (history.maxTasks %d; %d kept at the end), sampled every %d\n", soakTasks, soakKeep, len(tasks), soakEvery)
		fmt.Printf("  Go heap (MiB):     %v  last five within %.0f %%: %v\n", mib(heap), soakFlat*100, heapFlat)
		fmt.Printf("  wasm memory (MiB): %v  last five within %.0f %%: %v\n", mib(wasmMem), soakFlat*100, wasmFlat)
	}
}

// flat reports whether the last five samples lie within soakFlat of each other (the spread over
// the smallest).
func flat(xs []float64) bool {
	last := xs[max(0, len(xs)-5):]
	lo, hi := slices.Min(last), slices.Max(last)
	return lo > 0 && (hi-lo)/lo <= soakFlat
}

func mib(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.1f", x/(1<<20))
	}
	return out
}
