package config

import "fmt"

// PluginEntries reads the "plugin" list of an OpenCode config file (opencode.json or tui.json,
// JSON with comments): each entry's spec, a string or the first item of a [spec, options] pair.
// `asyncagents doctor` shows them, so a user sees which spec OpenCode was given.
func PluginEntries(file, text string) ([]string, error) {
	n, err := parseJSONC(file, text)
	if err != nil || n == nil {
		return nil, err
	}
	if n.kind != 'o' {
		return nil, fmt.Errorf("%s: not a JSON object", file)
	}
	var out []string
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
				out = append(out, it.str)
			case it.kind == 'a' && len(it.items) > 0 && it.items[0].kind == 's':
				out = append(out, it.items[0].str)
			}
		}
	}
	return out, nil
}

// PluginOptionsErrors checks the options given with each of a config file's plugin entries whose
// spec names match (a [spec, options] pair), as the plugin checks them at its start: what is
// wrong in them, one error per entry, with no error for an entry without options.
func PluginOptionsErrors(file, text string, match func(spec string) bool) []error {
	n, err := parseJSONC(file, text)
	if err != nil || n == nil || n.kind != 'o' {
		return nil // PluginEntries says what is wrong with the file
	}
	var out []error
	for i, k := range n.keys {
		if k != "plugin" || n.vals[i].kind != 'a' {
			continue
		}
		for _, it := range n.vals[i].items {
			if it.kind != 'a' || len(it.items) < 2 || it.items[0].kind != 's' || !match(it.items[0].str) {
				continue
			}
			if _, err := applyOptions(Config{}, it.items[1]); err != nil {
				out = append(out, err)
			}
		}
	}
	return out
}
