package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// fbHarness drives a machine through launches and child answers, answering the effects that
// need a reply the way OpenCode would, and keeps every effect it saw.
type fbHarness struct {
	// holdPromptsTo: prompts to this session stay unanswered, kept in heldPrompts.
	holdPromptsTo string
	heldPrompts   []Effect
	t             *testing.T
	m             *Machine
	now           int64
	effects       []Effect
	nextSes       int
	// syncErr is the host's answer to history.sync: "" for writes that worked.
	syncErr string
	// workerAgents is a worker's answer to agents.list, by worker (else the local answer);
	// holdWorkerAgents leaves the workers' agents.list unanswered, for the test to answer.
	workerAgents     map[string]string
	holdWorkerAgents bool
	// promptErr fails every promptAsync with it ("" answers them OK).
	promptErr string
	// clockOff is a worker's clock minus the harness's, in ms: its sessions' created times.
	clockOff map[string]int64
}

func newFB(t *testing.T, cfg config.Config) *fbHarness {
	return &fbHarness{t: t, m: NewMachine(cfg), now: 1_000_000}
}

// step feeds an event and answers agents.list, session.create and promptAsync at once.
func (h *fbHarness) step(ev Event) []Effect {
	h.now += 10
	var all []Effect
	queue := h.m.Step(h.now, ev)
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		all = append(all, e)
		h.effects = append(h.effects, e)
		switch e.Kind {
		case EffectAgentsList:
			if e.Worker != "" && h.holdWorkerAgents {
				continue
			}
			list := `[{"name":"general","mode":"subagent"}]`
			if own := h.workerAgents[e.Worker]; e.Worker != "" && own != "" {
				list = own
			}
			queue = append(queue, h.m.Step(h.now, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(list)})...)
		case EffectSessionCreate:
			h.nextSes++
			created := ""
			if off, ok := h.clockOff[e.Worker]; ok {
				created = fmt.Sprintf(`,"created":%d`, h.now-5+off) // made a moment before its answer
			}
			queue = append(queue, h.m.Step(h.now, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":"ses_c%d"%s}`, h.nextSes, created))})...)
		case EffectPromptAsync:
			if h.holdPromptsTo != "" && e.SessionID == h.holdPromptsTo {
				h.heldPrompts = append(h.heldPrompts, e)
				continue
			}
			queue = append(queue, h.m.Step(h.now, Event{Type: EventEffectDone, EffectID: e.ID, OK: h.promptErr == "", Error: h.promptErr})...)
		case EffectHistorySync:
			queue = append(queue, h.m.Step(h.now, Event{Type: EventEffectDone, EffectID: e.ID, OK: h.syncErr == "", Error: h.syncErr})...)
		}
	}
	return all
}

func (h *fbHarness) launch() string {
	h.step(Event{Type: EventToolCall, CallID: fmt.Sprintf("call%d", h.nextSes), Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"survey","prompt":"look around","agent":"general"}`)})
	return fmt.Sprintf("ses_c%d", h.nextSes)
}

func (h *fbHarness) oc(typ, props string) []Effect {
	return h.step(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// answer has the child write one assistant message (an error when errJSON is set) and go idle.
func (h *fbHarness) answer(id, errJSON, text string) []Effect {
	msgID := fmt.Sprintf("msg_%d", h.now)
	created := h.now + 1
	if errJSON != "" {
		h.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","error":%s,"time":{"created":%d,"completed":%d}}}`, msgID, id, errJSON, created, created+1))
	} else {
		h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":%q,"type":"text","text":%q,"time":{"end":%d}}}`, h.now, id, msgID, text, created+1))
		h.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msgID, id, created, created+1))
	}
	return h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
}

func (h *fbHarness) busy(id string) {
	h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, id))
}

func prompts(effects []Effect, id string) []Effect {
	var out []Effect
	for _, e := range effects {
		if e.Kind == EffectPromptAsync && e.SessionID == id {
			out = append(out, e)
		}
	}
	return out
}

func ofKind(effects []Effect, kind string) []Effect {
	var out []Effect
	for _, e := range effects {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

const (
	rateLimited = `{"name":"APIError","data":{"message":"Rate limit reached for requests","statusCode":429,"isRetryable":true}}`
	tooLong     = `{"name":"APIError","data":{"message":"prompt is too long: 215000 tokens > 200000 maximum","statusCode":400,"isRetryable":false}}`
	badRequest  = `{"name":"APIError","data":{"message":"Invalid schema for function 'read': 'object' is not valid under any of the given schemas","statusCode":400,"isRetryable":false}}`
)

var chainAB = config.Config{Agents: map[string]config.AgentModels{"general": {Models: []string{"mock/mock-a", "mock/mock-b"}}}}

// A provider error on A moves the task to B, in the same session, with the same prompt; the task
// completes on B and its record, the notice and the health say so.
func TestFallbackToTheNextModel(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	first := prompts(h.effects, id)
	require.Len(t, first, 1)
	require.Equal(t, "mock/mock-a", first[0].Model)

	eff := h.answer(id, rateLimited, "")
	next := prompts(eff, id)
	require.Len(t, next, 1, "B gets the task")
	require.Equal(t, "mock/mock-b", next[0].Model)
	require.Equal(t, "look around", next[0].Parts[0].Text)
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusRunning, tk.Status)
	require.Len(t, ofKind(eff, EffectStateWrite), 1, "A's failure is recorded")

	h.busy(id)
	eff = h.answer(id, "", "found it on B")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "found it on B", tk.Result)
	info := tk.FallbackInfo
	require.NotNil(t, info)
	require.True(t, info.Occurred)
	require.Equal(t, "mock/mock-b", info.SuccessfulModel)
	require.Equal(t, 2, info.TotalAttempts)
	require.Equal(t, "mock/mock-a", info.Attempts[0].Model)
	require.False(t, info.Attempts[0].Success)
	require.Equal(t, "rate_limit", info.Attempts[0].Class)
	require.Contains(t, info.Attempts[0].Error, "Rate limit")
	require.True(t, info.Attempts[1].Success)
	var notice string
	for _, e := range prompts(eff, "ses_p") {
		notice = e.Parts[0].Text
	}
	require.Contains(t, notice, "Model: mock/mock-b (fallback after mock/mock-a (rate_limit))")
}

// A stale idle of the left attempt does not end the new one.
func TestFallbackIgnoresTheLeftAttemptsIdle(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.answer(id, rateLimited, "")
	eff := h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	require.Empty(t, ofKind(eff, EffectMessages), "no check before the new attempt starts")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusRunning, tk.Status)
}

// A non-provider error fails the task at once, on the first model.
func TestNoFallbackForABadRequest(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	eff := h.answer(id, badRequest, "")
	require.Empty(t, prompts(eff, id))
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, 400, tk.Error.StatusCode)
	require.Equal(t, 1, tk.FallbackInfo.TotalAttempts)
	require.Equal(t, "other", tk.FallbackInfo.Attempts[0].Class)
	require.Empty(t, ofKind(eff, EffectStateWrite), "a bad request says nothing about the model's health")
}

// Three failures open A's circuit: the fourth task starts on B, and says it skipped A. A
// machine restored from the health file skips A too; a success on A would close it.
func TestCircuitBreakerSkipsAFailingModel(t *testing.T) {
	h := newFB(t, chainAB)
	var state string
	for i := 0; i < 3; i++ {
		id := h.launch()
		eff := h.answer(id, rateLimited, "")
		for _, e := range ofKind(eff, EffectStateWrite) {
			state = e.Content
		}
		h.busy(id)
		h.answer(id, "", "ok")
	}
	require.Contains(t, state, `"failures": 3`)
	id := h.launch()
	p := prompts(h.effects, id)
	require.Equal(t, "mock/mock-b", p[0].Model)
	tk, _ := h.m.Task(id)
	require.Equal(t, []string{"mock/mock-a"}, tk.FallbackInfo.Skipped)
	require.True(t, tk.FallbackInfo.Occurred)

	r := newFB(t, chainAB)
	r.m.RestoreHealth(state)
	id = r.launch()
	require.Equal(t, "mock/mock-b", prompts(r.effects, id)[0].Model, "the circuit survives a restart")

	// An hour later the circuit is closed again.
	r.now += 2 * 3_600_000
	id = r.launch()
	require.Equal(t, "mock/mock-a", prompts(r.effects, id)[0].Model)
}

// With every circuit open, the whole chain is tried anyway.
func TestEveryCircuitOpenTriesTheChain(t *testing.T) {
	h := newFB(t, chainAB)
	h.m.RestoreHealth(fmt.Sprintf(`{"version":1,"models":{"mock/mock-a":{"failures":3,"openUntil":%d},"mock/mock-b":{"failures":5,"openUntil":%d}}}`, h.now+1e7, h.now+1e7))
	id := h.launch()
	require.Equal(t, "mock/mock-a", prompts(h.effects, id)[0].Model)
}

// A context-length error compacts the session with the same model, then retries once on it.
func TestContextLengthCompactsThenRetries(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	eff := h.answer(id, tooLong, "")
	sum := ofKind(eff, EffectSummarize)
	require.Len(t, sum, 1)
	require.Equal(t, "mock/mock-a", sum[0].Model)
	require.Empty(t, prompts(eff, id), "OpenCode continues the compacted session itself")
	// The compaction's summary is not the answer; the continuation's is.
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_sum","sessionID":%q,"role":"assistant","summary":true,"finish":"stop","time":{"created":%d,"completed":%d}}}`, id, h.now+1, h.now+2))
	eff = h.step(Event{Type: EventEffectDone, EffectID: sum[0].ID, OK: true})
	require.Empty(t, prompts(eff, id))
	h.answer(id, "", "fits now")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, 2, tk.FallbackInfo.TotalAttempts)
	require.True(t, tk.FallbackInfo.Attempts[1].Compacted)
	require.False(t, tk.FallbackInfo.Occurred)

	// A second context error after the compaction goes to the next model.
	id = h.launch()
	eff = h.answer(id, tooLong, "")
	h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectSummarize)[0].ID, OK: true})
	eff = h.answer(id, tooLong, "")
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
}

// OpenCode retrying a provider error on its own: with another model to go to, the attempt is
// aborted and the next model prompted once the abort is confirmed.
func TestRetryStatusSwitchesModels(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	eff := h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"retry","attempt":1,"message":"Rate limit exceeded","next":%d}}`, id, h.now+2000))
	abort := ofKind(eff, EffectAbort)
	require.Len(t, abort, 1)
	require.Empty(t, prompts(eff, id))
	// The aborted answer comes back as an error: it is ours, not a failure of the task.
	// Its message (created when the attempt began) completes, then the session goes idle.
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_run","sessionID":%q,"role":"assistant","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}},"time":{"created":%d,"completed":%d}}}`, id, h.now-100, h.now))
	eff = h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	require.Empty(t, prompts(eff, id), "not before OpenCode confirms the abort")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusRunning, tk.Status)
	eff = h.step(Event{Type: EventEffectDone, EffectID: abort[0].ID, OK: true})
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
	// On the last model, a retry status is left to OpenCode.
	h.busy(id)
	eff = h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"retry","attempt":1,"message":"Overloaded","next":1}}`, id))
	require.Empty(t, ofKind(eff, EffectAbort))
}

// An attempt with no activity for attemptTimeoutMs is left for the next model; on the last
// model the task fails with the timeout.
func TestAttemptTimeout(t *testing.T) {
	cfg := chainAB
	cfg.Fallback.AttemptTimeoutMs = 60_000
	h := newFB(t, cfg)
	id := h.launch()
	h.busy(id)
	h.now += 30_000
	eff := h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + id})
	require.Empty(t, ofKind(eff, EffectAbort), "30 s of silence is within the limit")
	h.now += 31_000
	eff = h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + id})
	abort := ofKind(eff, EffectAbort)
	require.Len(t, abort, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: abort[0].ID, OK: true})
	require.Empty(t, prompts(eff, id), "no prompt while the aborted turn winds down")
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_slow","sessionID":%q,"role":"assistant","error":{"name":"MessageAbortedError","data":{"message":"aborted"}},"time":{"created":%d,"completed":%d}}}`, id, h.now-1000, h.now))
	eff = h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
	h.busy(id)
	h.now += 61_000
	h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + id})
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "AttemptTimeout", tk.Error.Name)
	require.Equal(t, "timeout", tk.FallbackInfo.Attempts[1].Class)
}

// Without a configured chain a task runs on the model of its parent's turn; with neither,
// OpenCode chooses and there is no fallback record.
func TestChainFromTheParentsModel(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	require.Equal(t, "", prompts(h.effects, id)[0].Model)
	tk, _ := h.m.Task(id)
	require.Nil(t, tk.FallbackInfo)

	h.oc("message.updated", `{"info":{"id":"msg_p2","sessionID":"ses_p","role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4","time":{"created":1}}}`)
	id = h.launch()
	require.Equal(t, "anthropic/claude-sonnet-4", prompts(h.effects, id)[0].Model)
	one := newFB(t, config.Config{Agents: map[string]config.AgentModels{"general": {Model: "mock/mock-b"}}})
	id = one.launch()
	require.Equal(t, "mock/mock-b", prompts(one.effects, id)[0].Model)
	require.True(t, strings.HasPrefix(id, "ses_c"))
}

// A user message's summary is an object (title, diffs), an assistant's is true: neither breaks
// the reading of a child's messages or events.
func TestSummaryFieldShapes(t *testing.T) {
	raw := json.RawMessage(`[{"info":{"role":"user","summary":{"title":"x","diffs":[]},"time":{"created":1}}},
		{"info":{"role":"assistant","finish":"stop","time":{"created":2,"completed":3}},"parts":[{"type":"text","text":"ok"}]}]`)
	o, err := readOutcome(raw, 0)
	require.NoError(t, err)
	require.True(t, o.done)
	require.Equal(t, "ok", o.result)
	summary := json.RawMessage(`[{"info":{"role":"assistant","summary":true,"finish":"stop","time":{"created":2,"completed":3}},"parts":[{"type":"text","text":"a summary"}]}]`)
	o, err = readOutcome(summary, 0)
	require.NoError(t, err)
	require.False(t, o.done, "a compaction's summary is not the answer")

	h := newFB(t, chainAB)
	id := h.launch()
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_u","sessionID":%q,"role":"user","summary":{"title":"t","diffs":[]},"time":{"created":%d}}}`, id, h.now))
	h.answer(id, "", "done")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
}

// OpenCode reports a failed turn (session.error, idle) before it has finished writing the failed
// message; a prompt sent then is dropped. The next attempt waits for the message to complete.
func TestFallbackWaitsForTheFailedTurnToSettle(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_a","sessionID":%q,"role":"assistant","error":%s,"time":{"created":%d}}}`, id, rateLimited, h.now))
	h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":%s}`, id, rateLimited))
	eff := h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	require.Empty(t, prompts(eff, id), "the failed message is not complete yet")
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_a","sessionID":%q,"role":"assistant","error":%s,"time":{"created":%d,"completed":%d}}}`, id, rateLimited, h.now-50, h.now))
	eff = h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
}

// A tool at work (a silent ten-minute build) is not a hanging model: the attempt timeout waits
// for it, and counts again from the tool's end.
func TestAttemptTimeoutWaitsForARunningTool(t *testing.T) {
	cfg := chainAB
	cfg.Fallback.AttemptTimeoutMs = 60_000
	h := newFB(t, cfg)
	id := h.launch()
	h.busy(id)
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t","sessionID":%q,"messageID":"msg_x","type":"tool","callID":"call_build","tool":"bash","state":{"status":"running"}}}`, id))
	h.now += 600_000
	eff := h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + id})
	require.Empty(t, ofKind(eff, EffectAbort), "ten minutes in a tool is not a silent model")
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t","sessionID":%q,"messageID":"msg_x","type":"tool","callID":"call_build","tool":"bash","state":{"status":"completed"}}}`, id))
	h.now += 61_000
	eff = h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + id})
	require.Len(t, ofKind(eff, EffectAbort), 1, "silence after the tool ended counts")
}
