package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The option table (docs/configuration.md) sits between these markers; the rest is hand-written.
const (
	optionsBegin = "<!-- options:begin: written by `make generate` from internal/cmd/generate/options.go -->"
	optionsEnd   = "<!-- options:end -->"
)

// optionTable is docs/configuration.md's table of every option, with the core's defaults.
func optionTable() (string, error) {
	defs, err := defaults()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| option | default | what it does |\n| --- | --- | --- |\n")
	for _, o := range options {
		def := o.none
		v, ok := defs[o.path]
		if o.def != nil {
			v, ok = o.def, true
		}
		if ok {
			j, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			def = string(j)
			if _, isNum := v.(float64); !isNum && !isInt(v) {
				def = "`" + def + "`"
			}
		}
		if def == "" {
			return "", fmt.Errorf("%s: no default and no text for none", o.path)
		}
		where := ""
		if o.noFile {
			where = " (`opencode.json` only)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s%s |\n", o.path, def, strings.ReplaceAll(o.doc, "|", `\|`), where)
	}
	return b.String(), nil
}

// withOptionTable returns readme with the text between the markers replaced by the table.
func withOptionTable(readme []byte) ([]byte, error) {
	i := bytes.Index(readme, []byte(optionsBegin))
	j := bytes.Index(readme, []byte(optionsEnd))
	if i < 0 || j < i {
		return nil, fmt.Errorf("docs/configuration.md lacks the markers %q and %q", optionsBegin, optionsEnd)
	}
	table, err := optionTable()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Write(readme[:i+len(optionsBegin)])
	out.WriteString("\n" + table)
	out.Write(readme[j:])
	return out.Bytes(), nil
}

func isInt(v any) bool {
	switch v.(type) {
	case int, int64:
		return true
	}
	return false
}
