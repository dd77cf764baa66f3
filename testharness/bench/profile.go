package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
)

// The plugin appends one JSON line per hop of a task to the file ASYNCAGENTS_PROFILE names:
// {"t": Unix ms (float), "hop": name, "call": tool call ID, "task": task ID, "session": session
// ID}, the IDs where it knows them. A build without profiling writes nothing.
type hopLine struct {
	T       float64 `json:"t"`
	Hop     string  `json:"hop"`
	Call    string  `json:"call"`
	Task    string  `json:"task"`
	Session string  `json:"session"`
}

// The points of a task's life, in order: OpenCode's (tool part start and end, child completed,
// parent notice created) and the plugin's hops.
const (
	ptToolStart     = "tool part start"
	ptCalled        = "tool.called"
	ptAccepted      = "core.accepted"
	ptReturned      = "tool.returned"
	ptToolEnd       = "tool part end"
	ptCreateSent    = "session.create.sent"
	ptCreated       = "session.created"
	ptPromptSent    = "prompt.sent"
	ptChildDone     = "child completed"
	ptEventSeen     = "event.seen" // the child's completed message reached the plugin's event hook
	ptCoreSeen      = "core.seen"  // ... and the core's thread
	ptCoreStepped   = "core.stepped"
	ptIdle          = "idle"
	ptNoticeSent    = "notice.sent"
	ptNoticeCreated = "parent notice created"
)

// segment is the time from one point to the next.
type segment struct{ Group, From, To string }

func (s segment) String() string { return s.From + " → " + s.To }

var segments = []segment{
	{"launch", ptToolStart, ptCalled},
	{"launch", ptCalled, ptAccepted},
	{"launch", ptAccepted, ptReturned},
	{"launch", ptReturned, ptToolEnd},
	{"after the return", ptReturned, ptCreateSent},
	{"after the return", ptCreateSent, ptCreated},
	{"after the return", ptCreated, ptPromptSent},
	{"notice", ptChildDone, ptEventSeen},
	{"notice", ptEventSeen, ptCoreSeen},
	{"notice", ptCoreSeen, ptCoreStepped},
	{"notice", ptCoreStepped, ptNoticeSent},
	{"notice", ptChildDone, ptIdle},
	{"notice", ptIdle, ptNoticeSent},
	{"notice", ptNoticeSent, ptNoticeCreated},
}

// profile indexes the lines of a profile file by hop and ID.
type profile struct {
	lines int
	by    map[string][]hopLine // hop + "|" + ID (call, task or session), in file order
}

// readProfile reads the profile file; a missing file reads as no lines.
func readProfile(path string) (*profile, error) {
	p := &profile{by: map[string][]hopLine{}}
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var l hopLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Hop == "" {
			continue
		}
		p.lines++
		for _, id := range []string{l.Call, l.Task, l.Session} {
			if id != "" {
				k := l.Hop + "|" + id
				p.by[k] = append(p.by[k], l)
			}
		}
	}
	return p, sc.Err()
}

// first is the earliest line of hop with the ID.
func (p *profile) first(hop, id string) (float64, bool) {
	ls := p.by[hop+"|"+id]
	if id == "" || len(ls) == 0 {
		return 0, false
	}
	t := ls[0].T
	for _, l := range ls[1:] {
		t = min(t, l.T)
	}
	return t, true
}

// points are one task's times in Unix ms: OpenCode's, and each hop the profile has for it.
func (p *profile) points(t taskRun) map[string]float64 {
	pt := map[string]float64{ptToolStart: float64(t.LaunchStart), ptToolEnd: float64(t.LaunchEnd)}
	if t.ChildDone != 0 {
		pt[ptChildDone] = float64(t.ChildDone)
	}
	if t.NoticeAt != 0 {
		pt[ptNoticeCreated] = float64(t.NoticeAt)
	}
	// Each hop by the tool call's ID where the line has it, else by the task's.
	for _, hop := range []string{ptCalled, ptAccepted, ptReturned, ptCreateSent, ptCreated, ptPromptSent, ptNoticeSent} {
		if v, ok := p.first(hop, t.CallID); ok {
			pt[hop] = v
		} else if v, ok := p.first(hop, t.TaskID); ok {
			pt[hop] = v
		}
	}
	// The child's hops by its session (idle, its completed message seen): the last before the
	// notice was sent (a session may go idle more than once), or without that hop the first after
	// the child completed.
	if t.Session != "" {
		for _, hop := range []string{ptIdle, ptEventSeen, ptCoreSeen, ptCoreStepped} {
			if v, ok := p.bySession(hop, t, pt); ok {
				pt[hop] = v
			}
		}
	}
	if len(pt) == 2+btoi(t.ChildDone != 0)+btoi(t.NoticeAt != 0) {
		return nil // no hop of the plugin's
	}
	return pt
}

// bySession is the time of t's session's hop that belongs to its notice (see points).
func (p *profile) bySession(hop string, t taskRun, pt map[string]float64) (float64, bool) {
	sent, hasSent := pt[ptNoticeSent]
	var best float64
	found := false
	for _, l := range p.by[hop+"|"+t.Session] {
		switch {
		case hasSent && l.T <= sent && (!found || l.T > best):
			best, found = l.T, true
		case !hasSent && t.ChildDone != 0 && l.T >= float64(t.ChildDone)-1 && (!found || l.T < best):
			best, found = l.T, true
		}
	}
	return best, found
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hopDeltas gathers, per segment, the time from its first point to its second over tasks.
func hopDeltas(tasks []taskRun) map[string][]float64 {
	out := map[string][]float64{}
	for _, t := range tasks {
		if t.Profile == nil {
			continue
		}
		for _, s := range segments {
			from, ok1 := t.Profile[s.From]
			to, ok2 := t.Profile[s.To]
			if ok1 && ok2 {
				out[s.String()] = append(out[s.String()], to-from)
			}
		}
	}
	return out
}
