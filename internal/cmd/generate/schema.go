package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
)

// obj is a JSON object that keeps its keys in the order they were set.
type obj struct {
	keys []string
	vals map[string]any
}

func newObj() *obj { return &obj{vals: map[string]any{}} }

func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *obj) get(k string) any { return o.vals[k] }

func (o *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// schemaDescription is the config file's own description.
const schemaDescription = "The asyncagents plugin's config file: asyncagents.json or asyncagents.jsonc, global in the OpenCode config directory (~/.config/opencode, or $XDG_CONFIG_HOME/opencode) or per project in .opencode. The project's values win over the global ones, which win over the plugin options of opencode.json."

// configSchema is the JSON Schema of the config file (plugin-js/asyncagents.schema.json).
func configSchema() ([]byte, error) {
	defs, err := defaults()
	if err != nil {
		return nil, err
	}
	root := objectSchema(schemaDescription)
	root.get("properties").(*obj).set("$schema", newObj().set("type", "string").set("description", "This schema's location, for editors. The plugin ignores it."))
	s := newObj().set("$schema", "http://json-schema.org/draft-07/schema#").set("title", "asyncagents configuration")
	for _, k := range root.keys {
		s.set(k, root.get(k))
	}
	for _, o := range options {
		if o.noFile {
			continue
		}
		parts := strings.Split(o.path, ".")
		at := s
		last := parts[len(parts)-1]
		if last == "<name>" {
			// A map of leaves (concurrency.models.<name>): the leaf is the map's entries' schema.
			parts = parts[:len(parts)-1]
		}
		for i, p := range parts[:len(parts)-1] {
			group := strings.Join(parts[:i+1], ".")
			if p == "<name>" {
				at = at.get("additionalProperties").(*obj)
				continue
			}
			props := at.get("properties").(*obj)
			next, ok := props.get(p).(*obj)
			if !ok {
				desc, ok := groups[group]
				if !ok {
					return nil, fmt.Errorf("%s: the group %s has no description", o.path, group)
				}
				if i+1 < len(parts)-1 && parts[i+1] == "<name>" {
					names := newObj().set("minLength", 1)
					entry := objectSchema(groups[group+".<name>"])
					if group == "workers" {
						names = newObj().set("pattern", config.WorkerNamePattern).set("not", newObj().set("enum", config.ReservedWorkerNames))
						entry.set("required", config.WorkerRequired)
					}
					next = newObj().set("type", "object").set("description", desc).set("propertyNames", names)
					next.set("additionalProperties", entry)
				} else {
					next = objectSchema(desc)
				}
				props.set(p, next)
			}
			at = next
		}
		leaf, err := leafSchema(o, defs)
		if err != nil {
			return nil, err
		}
		if last == "<name>" {
			pattern := map[string]string{"model": config.ModelPattern, "provider": config.ProviderPattern}[o.keys]
			leaf = newObj().set("type", "object").set("description", groups[o.path[:len(o.path)-len(".<name>")]]).
				set("propertyNames", newObj().set("pattern", pattern)).set("additionalProperties", leaf)
		}
		at.get("properties").(*obj).set(parts[len(parts)-1], leaf)
	}
	var out bytes.Buffer
	b, err := marshal(s)
	if err != nil {
		return nil, err
	}
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func objectSchema(desc string) *obj {
	return newObj().set("type", "object").set("description", desc).set("additionalProperties", false).set("properties", newObj())
}

func leafSchema(o option, defs map[string]any) (*obj, error) {
	model := func(desc string) *obj {
		return newObj().set("type", "string").set("pattern", config.ModelPattern).set("description", desc)
	}
	var s *obj
	switch o.kind {
	case "integer":
		s = newObj().set("type", "integer").set("minimum", o.min)
		if o.keys != "" {
			return s.set("description", plain(o.doc)), nil
		}
	case "number":
		s = newObj().set("type", "number").set("minimum", 0)
	case "boolean":
		s = newObj().set("type", "boolean")
	case "enum":
		s = newObj().set("type", "string").set("enum", o.enum)
	case "string":
		s = newObj().set("type", "string").set("pattern", o.pattern)
	case "model":
		return model(plain(o.doc)), nil
	case "models":
		return newObj().set("type", "array").set("minItems", 1).set("uniqueItems", true).set("description", plain(o.doc)).
			set("items", model("A model, \"provider/model\" as OpenCode names models.")), nil
	default:
		return nil, fmt.Errorf("%s: kind %q", o.path, o.kind)
	}
	d, ok := defs[o.path]
	if o.def != nil {
		d, ok = o.def, true
	}
	if !ok && o.none != "" {
		return s.set("description", plain(o.doc)), nil
	}
	if !ok {
		return nil, fmt.Errorf("%s: the core has no default for it", o.path)
	}
	s.set("default", d)
	s.set("description", plain(o.doc))
	return s, nil
}
