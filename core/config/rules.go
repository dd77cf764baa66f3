package config

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ModelPattern is what a "provider/model" string must match: a provider with no slash or space,
// a slash, and a model ID with no space (model IDs may hold slashes of their own).
const ModelPattern = `^[^\s/]+/\S+$`

var modelRE = regexp.MustCompile(ModelPattern)

// ProviderPattern is what a provider's name must match: no slash, no space.
const ProviderPattern = `^[^\s/]+$`

var providerRE = regexp.MustCompile(ProviderPattern)

type ruleKind int

const (
	ruleObject ruleKind = iota // fixed fields
	ruleMap                    // any non-empty key, every value by one rule (agents)
	ruleInt                    // an integer >= min
	ruleBool
	ruleEnum   // one of enum
	ruleString // any string ($schema)
	ruleModel  // a "provider/model" string
	ruleModels // a non-empty array of distinct "provider/model" strings
	ruleNumber // a finite number >= 0 (a cost in US dollars)
	ruleText   // a string matching pattern (a worker's url, directory...)
)

// rule checks one value of a config file and applies it to a Config.
type rule struct {
	kind   ruleKind
	min    int64
	enum   []string
	fields []field           // ruleObject
	refuse map[string]string // ruleObject: fields of Config a file may not set, and why
	// required lists a ruleObject's fields that must be there; after checks its fields together
	// once each is valid, and names the field at fault ("" for the object) and why.
	required []string
	after    func(n *jnode) (field, msg string)
	// pattern and want: a ruleText's regular expression, and what it asks for in words.
	pattern string
	want    string
	each    *rule // ruleMap
	// key checks a ruleMap's keys beyond non-empty: keyModel ("provider/model") or keyProvider
	// (no slash).
	key int
	// set applies a checked leaf; setEntry a checked ruleMap entry.
	set      func(c *Config, n *jnode)
	setEntry func(c *Config, key string, n *jnode)
}

type field struct {
	name string
	rule *rule
}

func intRule(min int64, set func(c *Config, v int64)) *rule {
	return &rule{kind: ruleInt, min: min, set: func(c *Config, n *jnode) { v, _ := n.integer(); set(c, v) }}
}

// Kinds of ruleMap keys.
const (
	keyAny = iota
	keyModel
	keyProvider
	keyWorker // a worker's name (config/workers.go)
)

// numberRule takes a finite number >= 0.
func numberRule(set func(c *Config, v float64)) *rule {
	return &rule{kind: ruleNumber, set: func(c *Config, n *jnode) { v, _ := n.number(); set(c, v) }}
}

// limitMap is a map of concurrency limits: keys of the kind given, values integers >= 0.
func limitMap(key int, get func(c *Config) *map[string]int) *rule {
	return &rule{kind: ruleMap, key: key, each: &rule{kind: ruleInt, min: 0}, setEntry: func(c *Config, k string, n *jnode) {
		v, _ := n.integer()
		m := get(c)
		if *m == nil {
			*m = map[string]int{}
		}
		(*m)[k] = int(v)
	}}
}

func object(fields ...field) *rule { return &rule{kind: ruleObject, fields: fields} }

// fileRules are the keys a config file may hold. plugin-js/asyncagents.schema.json says the same
// (schema_test.go checks it).
var fileRules = func() *rule {
	agent := object(
		field{"model", &rule{kind: ruleModel}},
		field{"models", &rule{kind: ruleModels}},
		field{"isolation", &rule{kind: ruleEnum, enum: Isolations}},
		field{"worker", &rule{kind: ruleText, pattern: WorkerChoicePattern, want: `a worker's name, "auto" or "local"`}},
	)
	root := object(
		field{"$schema", &rule{kind: ruleString, set: func(*Config, *jnode) {}}},
		field{"agents", &rule{kind: ruleMap, each: agent, setEntry: func(c *Config, name string, n *jnode) {
			var a AgentModels
			for i, k := range n.keys {
				v := n.vals[i]
				switch k {
				case "model":
					a.Model = v.str
				case "isolation":
					a.Isolation = v.str
				case "worker":
					a.Worker = v.str
				case "models":
					a.Models = make([]string, len(v.items))
					for j, it := range v.items {
						a.Models[j] = it.str
					}
				}
			}
			c.Agents[name] = a
		}}},
		field{"workers", &rule{kind: ruleMap, key: keyWorker, each: workerRule(), setEntry: setWorker}},
		field{"fallback", object(
			field{"attemptTimeoutMs", intRule(1000, func(c *Config, v int64) { c.Fallback.AttemptTimeoutMs = v })},
			field{"failureThreshold", intRule(1, func(c *Config, v int64) { c.Fallback.FailureThreshold = int(v) })},
			field{"cooldownMs", intRule(0, func(c *Config, v int64) { c.Fallback.CooldownMs = Int64(v) })},
			field{"enabled", &rule{kind: ruleBool, set: func(c *Config, n *jnode) { c.Fallback.Enabled = Bool(n.b) }}},
		)},
		field{"history", object(
			field{"maxTasks", intRule(1, func(c *Config, v int64) { c.History.MaxTasks = int(v) })},
			field{"maxAgeDays", intRule(1, func(c *Config, v int64) { c.History.MaxAgeDays = int(v) })},
		)},
		field{"stall", object(
			field{"warnAfterMs", intRule(0, func(c *Config, v int64) { c.Stall.WarnAfterMs = &v })},
		)},
		field{"taskTimeoutMs", intRule(0, func(c *Config, v int64) { c.TaskTimeoutMs = v })},
		field{"tmux", object(
			field{"enabled", &rule{kind: ruleBool, set: func(c *Config, n *jnode) { c.Tmux.Enabled = n.b }}},
		)},
		field{"notify", object(
			field{"wake", &rule{kind: ruleEnum, enum: []string{WakeBatch, WakeEach}, set: func(c *Config, n *jnode) { c.Notify.Wake = n.str }}},
			field{"format", &rule{kind: ruleEnum, enum: []string{FormatPlain, FormatMarkdown}, set: func(c *Config, n *jnode) { c.Notify.Format = n.str }}},
		)},
		field{"isolation", &rule{kind: ruleEnum, enum: Isolations, set: func(c *Config, n *jnode) { c.Isolation = n.str }}},
		field{"toasts", &rule{kind: ruleEnum, enum: []string{ToastsAll, ToastsErrors, ToastsOff}, set: func(c *Config, n *jnode) { c.Toasts = n.str }}},
		field{"maxResultChars", intRule(1, func(c *Config, v int64) { c.MaxResultChars = int(v) })},
		field{"pollIntervalMs", intRule(1, func(c *Config, v int64) { c.PollIntervalMs = v })},
		field{"defaultBlockTimeoutMs", intRule(1, func(c *Config, v int64) { c.DefaultBlockTimeoutMs = v })},
		field{"maxBlockTimeoutMs", intRule(1, func(c *Config, v int64) { c.MaxBlockTimeoutMs = v })},
		field{"maxConcurrentStarts", intRule(1, func(c *Config, v int64) { c.MaxConcurrentStarts = int(v) })},
		field{"maxDepth", intRule(1, func(c *Config, v int64) { c.MaxDepth = int(v) })},
		field{"cancelOnParentAbort", &rule{kind: ruleBool, set: func(c *Config, n *jnode) { c.CancelOnParentAbort = Bool(n.b) }}},
		field{"concurrency", object(
			field{"default", intRule(0, func(c *Config, v int64) { c.Concurrency.Default = int(v) })},
			field{"providers", limitMap(keyProvider, func(c *Config) *map[string]int { return &c.Concurrency.Providers })},
			field{"models", limitMap(keyModel, func(c *Config) *map[string]int { return &c.Concurrency.Models })},
		)},
		field{"permission", object(
			field{"timeoutMs", intRule(0, func(c *Config, v int64) { c.Permission.TimeoutMs = v })},
		)},
		field{"headless", object(
			field{"waitForTasks", &rule{kind: ruleBool, set: func(c *Config, n *jnode) { c.Headless.WaitForTasks = Bool(n.b) }}},
		)},
		field{"budget", object(
			field{"steps", intRule(0, func(c *Config, v int64) { c.Budget.Steps = int(v) })},
			field{"tokens", intRule(0, func(c *Config, v int64) { c.Budget.Tokens = v })},
			field{"costUsd", numberRule(func(c *Config, v float64) { c.Budget.CostUsd = v })},
			field{"sessionCostUsd", numberRule(func(c *Config, v float64) { c.Budget.SessionCostUsd = v })},
		)},
	)
	root.refuse = map[string]string{
		"api":         "not allowed in this file: the status API's options go in the plugin options of opencode.json",
		"development": "not allowed in this file: the plugin sets it from NODE_ENV",
	}
	root.field("tmux").refuse = map[string]string{"inside": "not allowed in this file: the plugin sets it from $TMUX"}
	root.field("headless").refuse = map[string]string{"active": "not allowed in this file: the plugin sets it when OpenCode runs non-interactively"}
	return root
}()

func (r *rule) field(name string) *rule {
	for _, f := range r.fields {
		if f.name == name {
			return f.rule
		}
	}
	return nil
}

// check validates n at path p (for messages) and returns the first problem, in file order.
func (r *rule) check(file, p string, n *jnode) error {
	bad := func(at, msg string) error { return &ConfigError{File: file, Field: at, Msg: msg} }
	got := func(want string) error { return bad(p, "must be "+want+", got "+n.render()) }
	switch r.kind {
	case ruleObject, ruleMap:
		if n.kind != 'o' {
			if p == "" {
				return bad("", "the top level must be an object, got "+n.render())
			}
			return got("an object")
		}
		seen := map[string]bool{}
		for i, k := range n.keys {
			at := joinField(p, k)
			if seen[k] {
				return bad(at, "duplicate field")
			}
			seen[k] = true
			if r.kind == ruleMap {
				switch {
				case k == "" && r.key == keyAny:
					return bad(at, "an agent name must not be empty")
				case r.key == keyModel && !modelRE.MatchString(k):
					return bad(at, `must be keyed by a "provider/model" name, got `+strconv.Quote(k))
				case r.key == keyProvider && !providerRE.MatchString(k):
					return bad(at, `must be keyed by a provider's name (no "/"), got `+strconv.Quote(k))
				case r.key == keyWorker && checkWorkerName(k) != "":
					return bad(at, checkWorkerName(k))
				}
				if err := r.each.check(file, at, n.vals[i]); err != nil {
					return err
				}
				continue
			}
			sub := r.field(k)
			if sub == nil {
				if why, ok := r.refuse[k]; ok {
					return bad(at, why)
				}
				return bad(at, "unknown field "+r.suggest(k))
			}
			if err := sub.check(file, at, n.vals[i]); err != nil {
				return err
			}
		}
		for _, k := range r.required {
			if !seen[k] {
				return bad(p, "missing "+k)
			}
		}
		if r.after != nil {
			if f, msg := r.after(n); msg != "" {
				at := p
				if f != "" {
					at = joinField(p, f)
				}
				return bad(at, msg)
			}
		}
	case ruleInt:
		v, ok := n.integer()
		if !ok || v < r.min {
			if r.min == 1 {
				return got("a positive integer")
			}
			return got(fmt.Sprintf("an integer >= %d", r.min))
		}
	case ruleNumber:
		if v, ok := n.number(); !ok || v < 0 {
			return got("a number >= 0")
		}
	case ruleBool:
		if n.kind != 'b' {
			return got("true or false")
		}
	case ruleEnum:
		if n.kind != 's' || !contains(r.enum, n.str) {
			q := make([]string, len(r.enum))
			for i, e := range r.enum {
				q[i] = strconv.Quote(e)
			}
			return got(strings.Join(q, " or "))
		}
	case ruleString:
		if n.kind != 's' {
			return got("a string")
		}
	case ruleText:
		if n.kind != 's' || !regexp.MustCompile(r.pattern).MatchString(n.str) {
			return got(r.want)
		}
	case ruleModel:
		if n.kind != 's' || !modelRE.MatchString(n.str) {
			return got(`a "provider/model" string`)
		}
	case ruleModels:
		if n.kind != 'a' || len(n.items) == 0 {
			return got(`a non-empty array of "provider/model" strings`)
		}
		first := map[string]int{}
		for i, it := range n.items {
			at := fmt.Sprintf("%s[%d]", p, i)
			if it.kind != 's' || !modelRE.MatchString(it.str) {
				return bad(at, `must be a "provider/model" string, got `+it.render())
			}
			if j, dup := first[it.str]; dup {
				return bad(at, fmt.Sprintf("duplicate model %q (also at [%d])", it.str, j))
			}
			first[it.str] = i
		}
	}
	return nil
}

// apply sets the values of a checked node on c.
func (r *rule) apply(c *Config, n *jnode) {
	switch r.kind {
	case ruleObject:
		for i, k := range n.keys {
			if sub := r.field(k); sub != nil {
				sub.apply(c, n.vals[i])
			}
		}
	case ruleMap:
		for i, k := range n.keys {
			r.setEntry(c, k, n.vals[i])
		}
	default:
		if r.set != nil {
			r.set(c, n)
		}
	}
}

// suggest names the known field closest to an unknown one, or lists them all.
func (r *rule) suggest(k string) string {
	best, bestD := "", 1<<30
	for _, f := range r.fields {
		lk, lf := strings.ToLower(k), strings.ToLower(f.name)
		d := editDistance(lk, lf)
		// attemptTimeout for attemptTimeoutMs: a long enough prefix counts as a near miss.
		if min(len(lk), len(lf)) >= 4 && (strings.HasPrefix(lf, lk) || strings.HasPrefix(lk, lf)) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.name, d
		}
	}
	if best != "" && bestD <= max(2, len(best)/4) {
		return "(did you mean " + best + "?)"
	}
	names := make([]string, 0, len(r.fields))
	for _, f := range r.fields {
		names = append(names, f.name)
	}
	sort.Strings(names)
	return "(allowed: " + strings.Join(names, ", ") + ")"
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

// joinField extends a field path: agents.explore, or agents["my agent"] for an odd name.
func joinField(p, k string) string {
	if !plainKey.MatchString(k) {
		return p + "[" + strconv.Quote(k) + "]"
	}
	if p == "" {
		return k
	}
	return p + "." + k
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
