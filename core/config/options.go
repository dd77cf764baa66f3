package config

import "encoding/json"

// OptionsSource names the plugin options of opencode.json in a ConfigError.
const OptionsSource = "opencode.json (the asyncagents plugin's options)"

// ApplyOptions layers the plugin options of opencode.json, as the user wrote them, over base,
// with the checks and messages of a config file: a wrong type or an unknown key is named with
// its source and field, and base comes back unchanged. Only the keys a file may not set are left
// to base: api and development (the plugin merges its own into them) and tmux.inside.
func ApplyOptions(base Config, raw json.RawMessage) (Config, error) {
	if len(raw) == 0 {
		return base, nil
	}
	root, err := parseJSONC(OptionsSource, string(raw))
	if err != nil || root == nil {
		return base, err
	}
	return applyOptions(base, root)
}

// applyOptions is ApplyOptions on the options as read.
func applyOptions(base Config, root *jnode) (Config, error) {
	if root.kind != 'o' {
		return base, &ConfigError{File: OptionsSource, Msg: "must be an object, got " + root.render()}
	}
	kept := &jnode{kind: 'o'}
	for i, k := range root.keys {
		if k != "api" && k != "development" {
			kept.keys, kept.vals = append(kept.keys, k), append(kept.vals, root.vals[i])
		}
	}
	if err := fileRules.check(OptionsSource, "", kept); err != nil {
		return base, err
	}
	cfg := base
	cfg.Agents = make(map[string]AgentModels, len(base.Agents))
	for name, a := range base.Agents {
		cfg.Agents[name] = a
	}
	cfg.Concurrency.Providers = copyMap(base.Concurrency.Providers)
	cfg.Concurrency.Models = copyMap(base.Concurrency.Models)
	cfg.Workers = copyWorkers(base.Workers)
	fileRules.apply(&cfg, kept)
	if len(cfg.Agents) == 0 {
		cfg.Agents = base.Agents
	}
	return cfg, nil
}
