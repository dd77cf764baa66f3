package core

// The per-parent allow-list: which subagents a parent agent may launch comes from OpenCode's own
// permission rules for that agent, the ones users already write for the native task tool
// (permission.task in opencode.json). OpenCode hands each agent's rules over in its agent list,
// defaults first, then the top-level config, then the agent's own, so evaluating them as OpenCode
// does (the last rule matching both the permission and the pattern wins) gives the same answer
// the native task tool would.

// taskPermission is the permission OpenCode's rules name for launching a subagent.
const taskPermission = "task"

// taskAction is what the parent agent's rules say of launching agent: "allow", "deny" or "ask"
// (OpenCode's answer when no rule matches).
func taskAction(parent AgentInfo, agent string) string {
	action := "ask"
	for _, r := range parent.Permission {
		if wildcardMatch(taskPermission, r.Permission) && wildcardMatch(agent, r.Pattern) {
			action = r.Action
		}
	}
	return action
}

// mayLaunch reports whether a parent running parentAgent may launch agent. Only "deny" refuses:
// "ask" cannot be asked in the background, and OpenCode's own task tool lists an agent under
// "ask" among those the parent may call, so refusing it would make "ask" a second "deny". A
// parent the agent list does not name (a session with no agent, or one the list lacks) has no
// rules of its own and is refused nothing.
func (m *Machine) mayLaunch(parentAgent, agent string) bool {
	parent, ok := m.findAgent(parentAgent)
	if !ok {
		return true
	}
	return taskAction(parent, agent) != "deny"
}

// allowedSubagents lists the subagents parentAgent may launch, sorted.
func (m *Machine) allowedSubagents(parentAgent string) []string {
	var out []string
	for _, name := range m.subagentNames() {
		if m.mayLaunch(parentAgent, name) {
			out = append(out, name)
		}
	}
	return out
}

// wildcardMatch matches s against pattern as OpenCode's Wildcard.match does: the whole string,
// "*" any run of characters (newlines too), "?" any one character, everything else literally.
func wildcardMatch(s, pattern string) bool {
	str, pat := []rune(s), []rune(pattern)
	// The classic two-pointer glob match: on a mismatch, go back to the last "*" and let it
	// swallow one more character. Linear in practice, and no regular expression to compile.
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(pat) && (pat[pi] == '?' || pat[pi] == str[si]) && pat[pi] != '*':
			si++
			pi++
		case pi < len(pat) && pat[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}
