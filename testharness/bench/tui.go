package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The TUI without --port, as most users run OpenCode: its server listens nowhere, so a fan-out is
// typed into the terminal (tmux) and read from OpenCode's own storage (its SQLite database), whose
// timestamps are the ones the API would give.

// tmuxSession is a tmux server on a private socket.
type tmuxSession struct{ socket string }

func startTmuxSession() (*tmuxSession, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, fmt.Errorf("tmux is not installed: the TUI benchmark needs it")
	}
	t := &tmuxSession{socket: fmt.Sprintf("aa-bench-%d-%d", os.Getpid(), time.Now().UnixNano())}
	_, err := t.run("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "200", "-y", "50")
	return t, err
}

// run runs one tmux command (10 s at most) and returns its output.
func (t *tmuxSession) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", t.socket}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (t *tmuxSession) close() {
	path, _ := t.run("display", "-p", "#{socket_path}")
	_, _ = t.run("kill-server")
	if p := strings.TrimSpace(path); p != "" {
		_ = os.Remove(p) // tmux leaves its socket file behind
	}
}

// storageScript prints every session's messages, shaped as OpenCode's API gives them (info and
// parts, with their IDs), from OpenCode's database, opened read-only.
const storageScript = `import { Database } from "bun:sqlite";
const db = new Database(process.argv[2], { readonly: true });
const byMessage = new Map();
for (const p of db.query("select id, message_id, session_id, data from part order by id").all()) {
  const part = { ...JSON.parse(p.data), id: p.id, messageID: p.message_id, sessionID: p.session_id };
  if (!byMessage.has(p.message_id)) byMessage.set(p.message_id, []);
  byMessage.get(p.message_id).push(part);
}
const sessions = {};
for (const m of db.query("select id, session_id, data from message order by id").all()) {
  const info = { ...JSON.parse(m.data), id: m.id, sessionID: m.session_id };
  (sessions[m.session_id] ??= []).push({ info, parts: byMessage.get(m.id) ?? [] });
}
db.close();
console.log(JSON.stringify(sessions));
`

// tuiOpenCode is a fan-out's opencode in the TUI: the prompt goes through the terminal, every
// reading comes from OpenCode's database.
type tuiOpenCode struct {
	tm     *tmuxSession
	pane   string
	bun    string // the bun binary of the repository's node_modules
	script string // storageScript's file
	db     string

	mu     sync.Mutex
	at     time.Time
	cached map[string][]ocserve.Message
}

func newTUIOpenCode(tm *tmuxSession, oc *ocserve.Server, repoRoot, dir string) (*tuiOpenCode, error) {
	script := filepath.Join(dir, "storage.ts")
	if err := os.WriteFile(script, []byte(storageScript), 0o644); err != nil {
		return nil, err
	}
	return &tuiOpenCode{tm: tm, pane: oc.Pane, bun: filepath.Join(repoRoot, "node_modules", ".bin", "bun"), script: script,
		db: filepath.Join(oc.Home, ".local", "share", "opencode", "opencode.db")}, nil
}

// tuiPollEvery paces the TUI's readings: each runs a short bun process, so it is slower than the
// API's, which only bounds how soon a run ends.
const tuiPollEvery = 500 * time.Millisecond

func (o *tuiOpenCode) pace() time.Duration { return tuiPollEvery }

// screen is what the TUI's pane shows.
func (o *tuiOpenCode) screen() (string, error) { return o.tm.run("capture-pane", "-p", "-t", o.pane) }

// waitScreen waits until the pane shows want.
func (o *tuiOpenCode) waitScreen(ctx context.Context, want string) error {
	for {
		s, err := o.screen()
		if err == nil && strings.Contains(s, want) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the TUI never showed %q (last screen: %q, %v): %w", want, strings.TrimSpace(s), err, ctx.Err())
		case <-time.After(tuiPollEvery):
		}
	}
}

// homePrompt is the TUI's empty prompt on a new session's screen.
const homePrompt = "Ask anything"

// start opens a new session (/new), types the prompt and finds the session it went to in the
// database: the root session whose first user message is the prompt.
func (o *tuiOpenCode) start(ctx context.Context, _, prompt string) (string, error) {
	if _, err := o.tm.run("send-keys", "-t", o.pane, "-l", "/new"); err != nil {
		return "", err
	}
	// The command list opens under the typed "/new"; Enter picks it.
	if err := o.waitScreen(ctx, "New session"); err != nil {
		return "", err
	}
	if _, err := o.tm.run("send-keys", "-t", o.pane, "Enter"); err != nil {
		return "", err
	}
	if err := o.waitScreen(ctx, homePrompt); err != nil {
		return "", err
	}
	if _, err := o.tm.run("send-keys", "-t", o.pane, "-l", prompt); err != nil {
		return "", err
	}
	if err := o.waitScreen(ctx, prompt[:min(len(prompt), 40)]); err != nil {
		return "", err
	}
	if _, err := o.tm.run("send-keys", "-t", o.pane, "Enter"); err != nil {
		return "", err
	}
	for {
		all, err := o.snapshot(ctx, 0)
		if err != nil {
			return "", err
		}
		for id, msgs := range all {
			if len(msgs) > 0 && msgs[0].Info.Role == "user" && msgs[0].Text() == prompt {
				return id, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no session holds the typed prompt %q: %w", prompt, ctx.Err())
		case <-time.After(tuiPollEvery):
		}
	}
}

// snapshot is every session's messages, read anew unless the last reading is younger than maxAge.
func (o *tuiOpenCode) snapshot(ctx context.Context, maxAge time.Duration) (map[string][]ocserve.Message, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cached != nil && time.Since(o.at) < maxAge {
		return o.cached, nil
	}
	if _, err := os.Stat(o.db); err != nil {
		return map[string][]ocserve.Message{}, nil // OpenCode has not written it yet
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(rctx, o.bun, o.script, o.db)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("reading OpenCode's database: %v: %s", err, msg)
	}
	all := map[string][]ocserve.Message{}
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, fmt.Errorf("reading OpenCode's database: %w", err)
	}
	o.cached, o.at = all, time.Now()
	return all, nil
}

func (o *tuiOpenCode) messages(ctx context.Context, session string) ([]ocserve.Message, error) {
	all, err := o.snapshot(ctx, tuiPollEvery/2)
	return all[session], err
}

// busy: the session's newest assistant message is unfinished, or it asked for tools (the loop
// goes on). User messages after it (a notice that asks no turn) do not count.
func (o *tuiOpenCode) busy(ctx context.Context, session string) (bool, error) {
	msgs, err := o.messages(ctx, session)
	if err != nil {
		return false, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i].Info; m.Role == "assistant" {
			return working(m), nil
		}
	}
	return false, nil
}

func working(m ocserve.MessageInfo) bool {
	return (m.Time.Completed == 0 && m.Error == nil) || m.Finish == "tool-calls"
}

// waitIdle waits until the session's newest message is an assistant message that has finished
// the turn.
func (o *tuiOpenCode) waitIdle(ctx context.Context, session string) error {
	for {
		msgs, err := o.messages(ctx, session)
		if err != nil {
			return err
		}
		if n := len(msgs); n > 0 && msgs[n-1].Info.Role == "assistant" && !working(msgs[n-1].Info) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s not idle: %w", session, ctx.Err())
		case <-time.After(tuiPollEvery):
		}
	}
}
