package config

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
// schema_test.go keeps the two in step.

import (
	"fmt"
	"path"
	"strings"
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
	// The files add to the concurrency maps entry by entry: copies, so base stays as it was.
	cfg.Concurrency.Providers = copyMap(base.Concurrency.Providers)
	cfg.Concurrency.Models = copyMap(base.Concurrency.Models)
	cfg.Workers = copyWorkers(base.Workers)
	origin := map[string]string{} // the file that set each agent, for checkAgentWorkers
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
		before := cfg.Agents
		cfg.Agents = make(map[string]AgentModels, len(before))
		for n, a := range before {
			cfg.Agents[n] = a
		}
		fileRules.apply(&cfg, root)
		for n, a := range cfg.Agents {
			if b, ok := before[n]; !ok || b.Worker != a.Worker {
				origin[n] = f.Path
			}
		}
	}
	if err := checkAgentWorkers(cfg, origin); err != nil {
		return base, err
	}
	if len(cfg.Agents) == 0 {
		cfg.Agents = base.Agents
	}
	return cfg, nil
}

func copyMap(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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
