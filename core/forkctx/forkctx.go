package forkctx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Fork context: what a forked child is told about its parent's conversation.
//
// The spec (seeds 001 and 004, "Fork Context Inheritance" and "Fork Preamble Injection") fixes:
//
//   - "user messages are labeled with `User:` prefix" and "assistant messages are labeled with
//     `Agent:` prefix": every message is one block starting with its label, blocks in order,
//     separated by a blank line;
//   - "format is `[Tool: {name}] {params_preview}`" and "parameter preview is truncated to 200
//     characters with ellipsis if exceeded": the preview is the call's JSON input, compacted, key
//     order kept; past MaxParamPreviewChars characters it is cut there and "…" (U+2026, one
//     character, the ellipsis the core's other texts use) is appended;
//   - "WHEN forked context contains tool results exceeding 1500 characters THEN system truncates
//     those results while preserving tool call structure (name, args, id) AND truncated results
//     include original length indicator": the `[Tool: …]` line always stays whole; the result
//     that follows names the tool and the call ID, and a cut result says how long it was:
//     `[Tool result truncated: 4,210 characters, first 1,500 shown (read, call ID call_1)]`, then
//     the first 1,500 characters and "…". A failed call's error text is a result too and is cut
//     the same way (`[Tool error …]`). The seeds give no wording for these lines; this is ours;
//   - "WHEN forked context total exceeds 100,000 tokens THEN system removes oldest messages until
//     context is under limit AND most recent messages are preserved": the whole text, preamble
//     included, is kept at or under MaxTokens as EstimateTokens counts; whole messages are dropped
//     from the oldest, and a line says how many were left out. If even the newest message alone
//     does not fit, its end is kept (the most recent part) and the line before it says how many
//     characters of it were left out;
//   - "preamble explains context may be truncated AND preamble advises re-reading files if
//     complete content is needed": ForkPreamble, first in the text.
//
// Layout (characters are runes, not bytes):
//
//	<ForkPreamble>
//
//	[12 earlier messages left out to fit the context limit]    (only when some were)
//
//	User: <first text part>
//	<each further part on its own line>
//
//	Agent: [Tool: read] {"filePath":"/a.go"}
//	[Tool result (read, call ID call_1)]
//	<output>
//
// Where the seeds say nothing, we chose:
//
//   - text parts: rendered as written (trimmed). `ignored` parts are skipped (OpenCode does not
//     send them to the model). `synthetic` parts are KEPT: OpenCode hides them in the TUI but
//     sends them to the model, so the parent's model saw them (our own task notices carry their
//     results in a synthetic part, seed 000 "the hidden part (synthetic: true) contains guidance
//     for the AI"), and the child should know what its parent knew;
//   - `reasoning`, `step-start`, `step-finish`, `snapshot`, `patch`, `agent`, `retry`,
//     `compaction` parts are dropped (bookkeeping or hidden thinking; edits show as tool calls);
//   - `file` parts become `[File: name]` (the attachment's content is not copied; the preamble
//     says to re-read files); `subtask` parts become `[Subtask: description (@agent)]`;
//   - a call still pending or running (the parent's own fork call is one) shows
//     `[Tool result (name, call ID id)] none: the call had not finished when the session was
//     forked`;
//   - a message with nothing left to show (only reasoning and steps) is left out and not counted
//     as kept;
//   - zero or negative options take the defaults (1,500, 200, 100,000).

// ForkPreamble opens every fork context.
const ForkPreamble = "You are a background task forked from another session. Below is that session's conversation " +
	"so far, condensed to fit your context, so it may be truncated: long tool results are cut (each " +
	"says how long it was), long tool parameters are shortened, and the oldest messages may have been " +
	"left out. Do not rely on it for the exact content of files or command output: if you need the " +
	"full content of a file, read it again."

// ForkOptions bounds the fork context. Zero fields take the defaults.
type ForkOptions struct {
	MaxToolResultChars   int // tool results (and tool errors) longer than this are cut; default 1500
	MaxParamPreviewChars int // a tool call's parameter preview is cut past this; default 200
	MaxTokens            int // the whole text, preamble included, as EstimateTokens counts; default 100000
}

// Defaults of ForkOptions.
const (
	DefaultForkMaxToolResultChars   = 1500
	DefaultForkMaxParamPreviewChars = 200
	DefaultForkMaxTokens            = 100000
)

func (o ForkOptions) withDefaults() ForkOptions {
	if o.MaxToolResultChars <= 0 {
		o.MaxToolResultChars = DefaultForkMaxToolResultChars
	}
	if o.MaxParamPreviewChars <= 0 {
		o.MaxParamPreviewChars = DefaultForkMaxParamPreviewChars
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultForkMaxTokens
	}
	return o
}

// ForkStats describes a fork context.
type ForkStats struct {
	Messages             int // messages in the parent session
	KeptMessages         int // messages shown in the text (a message cut to its end counts)
	TruncatedToolResults int // tool results and errors cut in the text
	Tokens               int // EstimateTokens of the text
}

type forkMessage struct {
	Info struct {
		Role string `json:"role"`
	} `json:"info"`
	Parts []forkPart `json:"parts"`
}

type forkPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`

	Tool   string `json:"tool"`
	CallID string `json:"callID"`
	State  struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  json.RawMessage `json:"error"`
	} `json:"state"`

	Filename    string `json:"filename"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Agent       string `json:"agent"`
}

// forkBlock is one message as rendered: label + body.
type forkBlock struct {
	label     string
	body      string
	truncated int // tool results cut in this message
}

func (b forkBlock) text() string { return b.label + " " + b.body }

// BuildForkContext renders a parent session's messages (the JSON array of `GET
// /session/:id/message`) as the text a forked child starts from. See the comment at the top of
// this file for the rules.
func BuildForkContext(raw json.RawMessage, opt ForkOptions) (string, ForkStats, error) {
	opt = opt.withDefaults()
	var msgs []forkMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return "", ForkStats{}, err
	}
	stats := ForkStats{Messages: len(msgs)}

	blocks := make([]forkBlock, 0, len(msgs))
	for _, m := range msgs {
		if b, ok := renderForkMessage(m, opt); ok {
			blocks = append(blocks, b)
		}
	}

	// Newest first: keep whole messages while the whole text fits.
	head := ForkPreamble
	budget := opt.MaxTokens - EstimateTokens(head)
	used := 0
	first := len(blocks)
	for first > 0 {
		cost := EstimateTokens("\n\n" + blocks[first-1].text())
		if used+cost+forkNoteCost(first-1) > budget {
			break
		}
		used += cost
		first--
	}
	// The estimate of the whole may differ from the sum of its parts at the seams: check it.
	text := assembleFork(blocks, first)
	for first < len(blocks) && EstimateTokens(text) > opt.MaxTokens {
		first++
		text = assembleFork(blocks, first)
	}
	if first == len(blocks) && len(blocks) > 0 {
		// Not even the newest message fits whole: keep as much of its end as fits.
		if t, ok := fitForkTail(blocks, opt.MaxTokens); ok {
			text = t
			stats.KeptMessages = 1
			stats.TruncatedToolResults = blocks[len(blocks)-1].truncated
		}
	} else {
		stats.KeptMessages = len(blocks) - first
		for _, b := range blocks[first:] {
			stats.TruncatedToolResults += b.truncated
		}
	}
	stats.Tokens = EstimateTokens(text)
	return text, stats, nil
}

// forkNote is the line that says how many of the oldest messages were left out.
func forkNote(dropped int) string {
	if dropped <= 0 {
		return ""
	}
	if dropped == 1 {
		return "\n\n[1 earlier message left out to fit the context limit]"
	}
	return "\n\n[" + forkThousands(dropped) + " earlier messages left out to fit the context limit]"
}

func forkNoteCost(dropped int) int {
	if dropped <= 0 {
		return 0
	}
	return EstimateTokens(forkNote(dropped))
}

func assembleFork(blocks []forkBlock, first int) string {
	var b strings.Builder
	b.WriteString(ForkPreamble)
	b.WriteString(forkNote(first))
	for _, blk := range blocks[first:] {
		b.WriteString("\n\n")
		b.WriteString(blk.text())
	}
	return b.String()
}

// fitForkTail keeps the longest end of the newest message that fits in maxTokens.
func fitForkTail(blocks []forkBlock, maxTokens int) (string, bool) {
	last := blocks[len(blocks)-1]
	body := []rune(last.body)
	build := func(n int) string {
		var b strings.Builder
		b.WriteString(ForkPreamble)
		b.WriteString(forkNote(len(blocks) - 1))
		b.WriteString("\n\n")
		b.WriteString(last.label)
		b.WriteString(" [the first " + forkThousands(len(body)-n) + " characters of this message left out to fit the context limit]\n…")
		b.WriteString(string(body[len(body)-n:]))
		return b.String()
	}
	if EstimateTokens(build(0)) > maxTokens {
		return "", false
	}
	lo, hi := 0, len(body) // build(lo) fits; find the largest n that fits
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if EstimateTokens(build(mid)) <= maxTokens {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo), true
}

func renderForkMessage(m forkMessage, opt ForkOptions) (forkBlock, bool) {
	blk := forkBlock{label: "User:"}
	if m.Info.Role == "assistant" {
		blk.label = "Agent:"
	}
	var lines []string
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if p.Ignored {
				continue
			}
			if t := strings.TrimSpace(p.Text); t != "" {
				lines = append(lines, t)
			}
		case "tool":
			s, cut := renderForkTool(p, opt)
			lines = append(lines, s)
			blk.truncated += cut
		case "file":
			name := p.Filename
			if name == "" {
				name = p.URL
			}
			if name == "" {
				name = "attachment"
			}
			lines = append(lines, "[File: "+name+"]")
		case "subtask":
			s := "[Subtask: " + strings.TrimSpace(p.Description)
			if p.Agent != "" {
				s += " (@" + p.Agent + ")"
			}
			lines = append(lines, s+"]")
		}
	}
	if len(lines) == 0 {
		return forkBlock{}, false
	}
	blk.body = strings.Join(lines, "\n")
	return blk, true
}

// renderForkTool renders a tool call and its result; cut is 1 when the result was truncated.
func renderForkTool(p forkPart, opt ForkOptions) (s string, cut int) {
	name := p.Tool
	if name == "" {
		name = "unknown"
	}
	var b strings.Builder
	b.WriteString("[Tool: " + name + "] " + forkParamPreview(p.State.Input, opt.MaxParamPreviewChars) + "\n")
	who := name
	if p.CallID != "" {
		who += ", call ID " + p.CallID
	}
	var kind, content string
	switch p.State.Status {
	case "completed":
		kind, content = "result", p.State.Output
	case "error":
		kind, content = "error", forkErrorText(p.State.Error)
	default:
		b.WriteString("[Tool result (" + who + ")] none: the call had not finished when the session was forked")
		return b.String(), 0
	}
	content = strings.TrimRight(content, " \t\r\n")
	total := utf8.RuneCountInString(content)
	switch {
	case total > opt.MaxToolResultChars:
		b.WriteString("[Tool " + kind + " truncated: " + forkThousands(total) + " characters, first " +
			forkThousands(opt.MaxToolResultChars) + " shown (" + who + ")]\n")
		b.WriteString(forkCutRunes(content, opt.MaxToolResultChars))
		b.WriteString("…")
		cut = 1
	case content == "":
		b.WriteString("[Tool " + kind + " (" + who + ")] (empty)")
	default:
		b.WriteString("[Tool " + kind + " (" + who + ")]\n" + content)
	}
	return b.String(), cut
}

// forkParamPreview is the call's input as compact JSON, cut at max characters with "…".
func forkParamPreview(input json.RawMessage, max int) string {
	s := "{}"
	if len(bytes.TrimSpace(input)) > 0 && string(bytes.TrimSpace(input)) != "null" {
		var buf bytes.Buffer
		if json.Compact(&buf, input) == nil {
			s = buf.String()
		} else {
			s = string(input)
		}
	}
	if utf8.RuneCountInString(s) > max {
		return forkCutRunes(s, max) + "…"
	}
	return s
}

// forkErrorText reads a tool state's error: a string in OpenCode, any JSON tolerated.
func forkErrorText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// forkCutRunes returns the first n characters (runes) of s.
func forkCutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// forkThousands formats n with comma thousands separators: 4210 -> "4,210".
func forkThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
