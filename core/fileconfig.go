package core

// The config files: asyncagents.json or asyncagents.jsonc, global in OpenCode's config directory
// ($XDG_CONFIG_HOME/opencode, else ~/.config/opencode) and per project in <directory>/.opencode.
// The core names the candidates (the storage op), the host reads those that exist and passes
// them to init in the same order, and the core parses, checks and layers them here:
//
//	defaults < the plugin options of opencode.json < the global file < the project file
//
// A value set in a later layer replaces the earlier one; objects (notify, fallback, tmux) merge
// field by field, except an agents.<name> entry, which replaces that agent's entry as a whole:
// a project that sets agents.explore.model gets that one model, not the global chain with it.
// Two files in one place (.json and .jsonc) are an error: which one counts would be a guess.
// An empty file (or one of comments only) sets nothing.
//
// A file that is not valid makes init answer configError, which names the file and the field;
// the machine then runs on the plugin options alone and refuses every asyncagents_task call with
// that text, so the user learns of it at the first launch rather than from a silently ignored
// chain. plugin-js/asyncagents.schema.json describes the same keys for editors;
// fileconfig_schema_test.go keeps the two in step.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ConfigFileBase is the config files' name without its extension (.json or .jsonc).
const ConfigFileBase = "asyncagents"

// ConfigFile is one config file as the host read it.
type ConfigFile struct {
	Path string `json:"path"`
	Text string `json:"text"`
	// Error says why the host could not read a file that exists (permissions, a directory).
	// Absent files are not sent at all.
	Error string `json:"error,omitempty"`
}

// ConfigCandidates lists where config files may be, in precedence order (later wins): the
// global .json and .jsonc, then the project's. With no config home and no home there is no
// global file; with no directory, no project file.
func ConfigCandidates(xdgConfigHome, home, projectDir string) []string {
	var dirs []string
	switch {
	case xdgConfigHome != "":
		dirs = append(dirs, path.Join(xdgConfigHome, "opencode"))
	case home != "":
		dirs = append(dirs, path.Join(home, ".config", "opencode"))
	}
	if projectDir != "" {
		dirs = append(dirs, path.Join(projectDir, ".opencode"))
	}
	var out []string
	for _, d := range dirs {
		out = append(out, path.Join(d, ConfigFileBase+".json"), path.Join(d, ConfigFileBase+".jsonc"))
	}
	return out
}

// ConfigError is an invalid config file: the file, and where in it (a field's path, or a line
// and column for JSON that does not parse).
type ConfigError struct {
	File   string
	Field  string // "agents.explore.models[1]"; empty for the top level or a syntax error
	Line   int    // 1-based, for a syntax error; 0 otherwise
	Column int
	Msg    string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("asyncagents: ")
	b.WriteString(e.File)
	b.WriteString(": ")
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: invalid JSON: ", e.Line, e.Column)
	case e.Field != "":
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ApplyConfigFiles layers files over base, in order. The first invalid file stops it: the error
// names it, and the config returned is base unchanged.
func ApplyConfigFiles(base Config, files []ConfigFile) (Config, error) {
	if err := checkOnePerPlace(files); err != nil {
		return base, err
	}
	cfg := base
	cfg.Agents = make(map[string]AgentModels, len(base.Agents))
	for name, a := range base.Agents {
		cfg.Agents[name] = a
	}
	for _, f := range files {
		if f.Error != "" {
			return base, &ConfigError{File: f.Path, Msg: "cannot read it: " + f.Error}
		}
		root, err := parseJSONC(f.Path, f.Text)
		if err != nil {
			return base, err
		}
		if root == nil {
			continue // empty: sets nothing
		}
		if err := fileRules.check(f.Path, "", root); err != nil {
			return base, err
		}
		fileRules.apply(&cfg, root)
	}
	if len(cfg.Agents) == 0 {
		cfg.Agents = base.Agents
	}
	return cfg, nil
}

// checkOnePerPlace refuses asyncagents.json and asyncagents.jsonc side by side.
func checkOnePerPlace(files []ConfigFile) error {
	seen := map[string]string{}
	for _, f := range files {
		dir, name := splitPath(f.Path)
		if prev, ok := seen[dir]; ok && prev != name {
			return &ConfigError{File: dir, Msg: fmt.Sprintf("both %s and %s exist; keep one of them", prev, name)}
		}
		seen[dir] = name
	}
	return nil
}

func splitPath(p string) (dir, name string) {
	i := strings.LastIndexAny(p, `/\`)
	if i < 0 {
		return ".", p
	}
	return p[:i], p[i+1:]
}

// ---- JSONC ----

// jnode is a parsed JSON value with its object keys in file order, so that the first problem
// reported is the first in the file.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*jnode
	items []*jnode
	str   string
	num   json.Number
	b     bool
}

// parseJSONC parses JSON with comments (// and /* */) and trailing commas. It answers nil for a
// file with nothing in it but whitespace and comments.
func parseJSONC(file, text string) (*jnode, error) {
	src := strings.TrimPrefix(text, "\uFEFF")
	plain, err := stripJSONC(src)
	if err != nil {
		line, col := lineCol(src, err.(*jsoncError).offset)
		return nil, &ConfigError{File: file, Line: line, Column: col, Msg: err.Error()}
	}
	if len(bytes.TrimSpace(plain)) == 0 {
		return nil, nil
	}
	// encoding/json says exactly where the text stops being JSON; its token reader, used below
	// for the key order, does not.
	var probe any
	if err := json.Unmarshal(plain, &probe); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, &ConfigError{File: file, Line: 1, Column: 1, Msg: err.Error()}
		}
		off, msg := int(se.Offset)-1, se.Error()
		if int(se.Offset) >= len(plain) {
			off, msg = len(plain), "unexpected end of file"
		}
		line, col := lineCol(src, off)
		return nil, &ConfigError{File: file, Line: line, Column: col, Msg: msg}
	}
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.UseNumber()
	return readNode(dec)
}

type jsoncError struct {
	offset int
	msg    string
}

func (e *jsoncError) Error() string { return e.msg }

// stripJSONC blanks comments and trailing commas with spaces, keeping every newline, so offsets
// (and so lines and columns) in the result are those of the original text.
func stripJSONC(src string) ([]byte, error) {
	out := []byte(src)
	comma, commaPrev := -1, byte(0) // a pending comma and the significant byte before it
	prev := byte(0)                 // the last significant byte
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(out) && out[j] != '"' {
				if out[j] == '\\' {
					j++
				}
				if j < len(out) && out[j] == '\n' {
					break // JSON strings hold no newline: let the JSON parser say so
				}
				j++
			}
			i, prev, comma = j, '"', -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &jsoncError{offset: i, msg: "unterminated /* comment"}
			}
			for k := i; k < i+2+end+2; k++ {
				if out[k] != '\n' {
					out[k] = ' '
				}
			}
			i += 2 + end + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == ',':
			comma, commaPrev, prev = i, prev, c
		case c == ']' || c == '}':
			if comma >= 0 && commaPrev != '[' && commaPrev != '{' && commaPrev != ',' {
				out[comma] = ' '
			}
			comma, prev = -1, c
		default:
			comma, prev = -1, c
		}
	}
	return out, nil
}

// lineCol turns a byte offset into a 1-based line and column (in characters).
func lineCol(src string, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	before := src[:off]
	line := strings.Count(before, "\n") + 1
	start := strings.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCountInString(before[start:]) + 1
}

func readNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			n := &jnode{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
				n.vals = append(n.vals, val)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &jnode{kind: 'a'}
		for dec.More() {
			item, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &jnode{kind: 's', str: v}, nil
	case json.Number:
		return &jnode{kind: 'n', num: v}, nil
	case bool:
		return &jnode{kind: 'b', b: v}, nil
	}
	return &jnode{kind: 'z'}, nil
}

// render shows a value in an error, cut to a readable length.
func (n *jnode) render() string {
	var b strings.Builder
	n.write(&b)
	s := b.String()
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)
		s = string(r[:57]) + "…"
	}
	return s
}

func (n *jnode) write(b *strings.Builder) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(strconv.Quote(n.str))
	case 'n':
		b.WriteString(n.num.String())
	case 'b':
		b.WriteString(strconv.FormatBool(n.b))
	default:
		b.WriteString("null")
	}
}

// integer reads an integral number (1000, 1000.0 and 1e3 alike) that fits in an int64.
func (n *jnode) integer() (int64, bool) {
	if n.kind != 'n' {
		return 0, false
	}
	if i, err := strconv.ParseInt(n.num.String(), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(n.num.String(), 64)
	if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// ---- the rules ----

// ModelPattern is what a "provider/model" string must match: a provider with no slash or space,
// a slash, and a model ID with no space (model IDs may hold slashes of their own).
const ModelPattern = `^[^\s/]+/\S+$`

var modelRE = regexp.MustCompile(ModelPattern)

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
)

// rule checks one value of a config file and applies it to a Config.
type rule struct {
	kind   ruleKind
	min    int64
	enum   []string
	fields []field           // ruleObject
	refuse map[string]string // ruleObject: fields of Config a file may not set, and why
	each   *rule             // ruleMap
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

func object(fields ...field) *rule { return &rule{kind: ruleObject, fields: fields} }

// fileRules are the keys a config file may hold. plugin-js/asyncagents.schema.json says the same
// (fileconfig_schema_test.go checks it).
var fileRules = func() *rule {
	agent := object(
		field{"model", &rule{kind: ruleModel}},
		field{"models", &rule{kind: ruleModels}},
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
				case "models":
					a.Models = make([]string, len(v.items))
					for j, it := range v.items {
						a.Models[j] = it.str
					}
				}
			}
			c.Agents[name] = a
		}}},
		field{"fallback", object(
			field{"attemptTimeoutMs", intRule(1000, func(c *Config, v int64) { c.Fallback.AttemptTimeoutMs = v })},
			field{"failureThreshold", intRule(1, func(c *Config, v int64) { c.Fallback.FailureThreshold = int(v) })},
			field{"cooldownMs", intRule(0, func(c *Config, v int64) { c.Fallback.CooldownMs = v })},
		)},
		field{"tmux", object(
			field{"enabled", &rule{kind: ruleBool, set: func(c *Config, n *jnode) { c.Tmux.Enabled = n.b }}},
		)},
		field{"notify", object(
			field{"wake", &rule{kind: ruleEnum, enum: []string{WakeBatch, WakeEach}, set: func(c *Config, n *jnode) { c.Notify.Wake = n.str }}},
		)},
		field{"maxResultChars", intRule(1, func(c *Config, v int64) { c.MaxResultChars = int(v) })},
		field{"pollIntervalMs", intRule(1, func(c *Config, v int64) { c.PollIntervalMs = v })},
		field{"defaultBlockTimeoutMs", intRule(1, func(c *Config, v int64) { c.DefaultBlockTimeoutMs = v })},
		field{"maxBlockTimeoutMs", intRule(1, func(c *Config, v int64) { c.MaxBlockTimeoutMs = v })},
		field{"maxConcurrentStarts", intRule(1, func(c *Config, v int64) { c.MaxConcurrentStarts = int(v) })},
		field{"maxDepth", intRule(1, func(c *Config, v int64) { c.MaxDepth = int(v) })},
	)
	root.refuse = map[string]string{
		"api":         "not allowed in this file: the status API's options go in the plugin options of opencode.json",
		"development": "not allowed in this file: the plugin sets it from NODE_ENV",
	}
	root.field("tmux").refuse = map[string]string{"inside": "not allowed in this file: the plugin sets it from $TMUX"}
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
				if k == "" {
					return bad(at, "an agent name must not be empty")
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
	case ruleInt:
		v, ok := n.integer()
		if !ok || v < r.min {
			if r.min == 1 {
				return got("a positive integer")
			}
			return got(fmt.Sprintf("an integer >= %d", r.min))
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
