package config

import "fmt"

// PluginEntry is one entry of an OpenCode config file's "plugin" list: a spec, or a
// [spec, options] pair.
type PluginEntry struct {
	Spec    string
	options *jnode // nil: none given
}

// OptionsError checks the entry's options as the plugin checks its own at its start (an entry of
// another plugin's is not to be checked); nil when they are right or none were given.
func (e PluginEntry) OptionsError() error {
	if e.options == nil {
		return nil
	}
	_, err := applyOptions(Config{}, e.options)
	return err
}

// PluginEntries reads the "plugin" list of an OpenCode config file (opencode.json or tui.json,
// JSON with comments). `asyncagents doctor` shows them, so a user sees which spec OpenCode was
// given, and checks the options given with its own.
func PluginEntries(file, text string) ([]PluginEntry, error) {
	n, err := parseJSONC(file, text)
	if err != nil || n == nil {
		return nil, err
	}
	if n.kind != 'o' {
		return nil, fmt.Errorf("%s: not a JSON object", file)
	}
	var out []PluginEntry
	for i, k := range n.keys {
		if k != "plugin" {
			continue
		}
		list := n.vals[i]
		if list.kind != 'a' {
			return nil, fmt.Errorf("%s: \"plugin\" is not a list", file)
		}
		for _, it := range list.items {
			switch {
			case it.kind == 's':
				out = append(out, PluginEntry{Spec: it.str})
			case it.kind == 'a' && len(it.items) > 0 && it.items[0].kind == 's':
				e := PluginEntry{Spec: it.items[0].str}
				if len(it.items) > 1 {
					e.options = it.items[1]
				}
				out = append(out, e)
			}
		}
	}
	return out, nil
}
