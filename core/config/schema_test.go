package config

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The JSON Schema shipped for editors (plugin-js/asyncagents.schema.json) and the core's own
// checks (fileRules) must say the same thing: these tests compare them field by field, and play
// the same documents through both.

var schemaFile = filepath.Join("..", "..", "plugin-js", "asyncagents.schema.json")

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

// mapKey stands for any agent name when a test walks the agents map.
const mapKey = "explore"

// The schema and the rules have the same fields, recursively, with the same types and bounds,
// and every field of the schema has a description.
func TestSchemaMatchesRules(t *testing.T) {
	s := loadSchema(t)
	require.Equal(t, "http://json-schema.org/draft-07/schema#", s["$schema"])
	compareSchema(t, "(top level)", s, fileRules)
}

func compareSchema(t *testing.T, at string, s map[string]any, r *rule) {
	t.Helper()
	desc, _ := s["description"].(string)
	require.NotEmpty(t, desc, "%s: the schema gives no description", at)
	switch r.kind {
	case ruleObject:
		require.Equal(t, "object", s["type"], at)
		require.Equal(t, false, s["additionalProperties"], "%s: the schema must refuse unknown fields, as the core does", at)
		props, _ := s["properties"].(map[string]any)
		var inSchema, inRules []string
		for k := range props {
			inSchema = append(inSchema, k)
		}
		for _, f := range r.fields {
			inRules = append(inRules, f.name)
		}
		sort.Strings(inSchema)
		sort.Strings(inRules)
		require.Equal(t, inRules, inSchema, "%s: the fields differ", at)
		var required []string
		for _, k := range asList(s["required"]) {
			required = append(required, k.(string))
		}
		require.Equal(t, r.required, required, "%s: the required fields differ", at)
		for _, f := range r.fields {
			compareSchema(t, joinField(strings.TrimPrefix(at, "(top level)"), f.name), props[f.name].(map[string]any), f.rule)
		}
	case ruleMap:
		require.Equal(t, "object", s["type"], at)
		require.Nil(t, s["properties"], at)
		reserved := []any{}
		for _, n := range ReservedWorkerNames {
			reserved = append(reserved, n)
		}
		names := map[int]map[string]any{keyAny: {"minLength": 1.0}, keyModel: {"pattern": ModelPattern}, keyProvider: {"pattern": ProviderPattern},
			keyWorker: {"pattern": WorkerNamePattern, "not": map[string]any{"enum": reserved}}}[r.key]
		require.Equal(t, names, s["propertyNames"], "%s: the names' rule", at)
		each, ok := s["additionalProperties"].(map[string]any)
		require.True(t, ok, "%s: additionalProperties must be the entries' schema", at)
		compareSchema(t, at+".<name>", each, r.each)
	case ruleInt:
		require.Equal(t, "integer", s["type"], at)
		require.Equal(t, float64(r.min), s["minimum"], "%s: minimum", at)
	case ruleNumber:
		require.Equal(t, "number", s["type"], at)
		require.Equal(t, 0.0, s["minimum"], "%s: minimum", at)
	case ruleBool:
		require.Equal(t, "boolean", s["type"], at)
	case ruleEnum:
		require.Equal(t, "string", s["type"], at)
		var enum []string
		for _, v := range s["enum"].([]any) {
			enum = append(enum, v.(string))
		}
		require.Equal(t, r.enum, enum, at)
	case ruleString:
		require.Equal(t, "string", s["type"], at)
		require.Nil(t, s["pattern"], at)
		require.Nil(t, s["enum"], at)
	case ruleText:
		require.Equal(t, "string", s["type"], at)
		require.Equal(t, r.pattern, s["pattern"], at)
	case ruleModel:
		require.Equal(t, "string", s["type"], at)
		require.Equal(t, ModelPattern, s["pattern"], at)
	case ruleModels:
		require.Equal(t, "array", s["type"], at)
		require.Equal(t, 1.0, s["minItems"], at)
		require.Equal(t, true, s["uniqueItems"], at)
		compareSchema(t, at+"[]", s["items"].(map[string]any), &rule{kind: ruleModel})
	default:
		t.Fatalf("%s: rule kind %d not compared", at, r.kind)
	}
}

// probes are values tried at every field: valid and invalid for each kind of field.
var probes = []any{
	nil, true, false, 0, 1, -1, 2, 999, 1000, 1000.0, 1.5, 1e3, "", "x", "a/b", "a/b/c", "a b/c", "/b", "a/",
	"batch", "each", []any{}, []any{"a/b"}, []any{"a/b", "c/d"}, []any{"a/b", "a/b"}, []any{"a/b", 1}, []any{"a"},
	map[string]any{}, map[string]any{"model": "a/b"}, map[string]any{"models": []any{"a/b"}}, map[string]any{"zz": 1},
	map[string]any{"enabled": true}, map[string]any{"wake": "each"}, map[string]any{mapKey: map[string]any{"model": "a/b"}},
}

// Every value at every field (and an unknown field at every level), played through the core and
// through the schema: both accept it or both refuse it.
func TestSchemaAndRulesAgree(t *testing.T) {
	s := loadSchema(t)
	paths := map[string][]string{}
	schemaPaths(s, nil, paths)
	rulePaths(fileRules, nil, paths)
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.Greater(t, len(keys), 15)
	checked := 0
	for _, k := range keys {
		p := paths[k]
		values := probes
		for _, v := range values {
			doc := nest(p, v)
			agree(t, s, doc)
			checked++
		}
		// An unknown field beside this one.
		unknown := append(append([]string{}, p[:len(p)-1]...), "zzUnknown")
		agree(t, s, nest(unknown, 1))
	}
	t.Logf("%d fields, %d documents", len(keys), checked)
}

func agree(t *testing.T, s map[string]any, doc any) {
	t.Helper()
	text, err := json.Marshal(doc)
	require.NoError(t, err)
	_, coreErr := ApplyConfigFiles(Config{}, []ConfigFile{{Path: "probe.json", Text: string(text)}})
	schemaErr := validateSchema(t, s, doc, "")
	if coreErr != nil && schemaErr == nil && strings.Contains(coreErr.Error(), "unknown worker") {
		return // agents.<name>.worker names a worker of the workers section: no schema sees across sections
	}
	require.Equal(t, coreErr == nil, schemaErr == nil, "%s: core says %v, schema says %v", text, coreErr, schemaErr)
}

func nest(p []string, v any) any {
	for i := len(p) - 1; i >= 0; i-- {
		v = map[string]any{p[i]: v}
	}
	return v
}

func schemaPaths(s map[string]any, p []string, out map[string][]string) {
	if props, ok := s["properties"].(map[string]any); ok {
		for k, sub := range props {
			q := append(append([]string{}, p...), k)
			out[strings.Join(q, ".")] = q
			schemaPaths(sub.(map[string]any), q, out)
		}
	}
	if each, ok := s["additionalProperties"].(map[string]any); ok {
		q := append(append([]string{}, p...), mapKey)
		out[strings.Join(q, ".")] = q
		schemaPaths(each, q, out)
	}
}

func rulePaths(r *rule, p []string, out map[string][]string) {
	switch r.kind {
	case ruleObject:
		for _, f := range r.fields {
			q := append(append([]string{}, p...), f.name)
			out[strings.Join(q, ".")] = q
			rulePaths(f.rule, q, out)
		}
	case ruleMap:
		q := append(append([]string{}, p...), mapKey)
		out[strings.Join(q, ".")] = q
		rulePaths(r.each, q, out)
	}
}

// validateSchema is a draft-07 validator for the keywords the shipped schema uses, and no more:
// a keyword it does not know fails the test, so the schema cannot say what is not checked here.
func validateSchema(t *testing.T, s map[string]any, v any, at string) error {
	t.Helper()
	for k := range s {
		switch k {
		case "$schema", "title", "description", "default",
			"type", "properties", "additionalProperties", "propertyNames", "pattern", "enum", "minimum", "minItems", "uniqueItems", "items", "minLength", "required", "not":
		default:
			t.Fatalf("%s: schema keyword %q is not supported by this test's validator", at, k)
		}
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: "+format, append([]any{at}, args...)...)
	}
	switch s["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fail("not an object")
		}
		props, _ := s["properties"].(map[string]any)
		for _, k := range asList(s["required"]) {
			if _, ok := obj[k.(string)]; !ok {
				return fail("missing %v", k)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if pn, ok := s["propertyNames"].(map[string]any); ok {
				if err := validateSchema(t, pn, k, at+"/"+k+"(name)"); err != nil {
					return err
				}
			}
			if sub, ok := props[k]; ok {
				if err := validateSchema(t, sub.(map[string]any), obj[k], at+"/"+k); err != nil {
					return err
				}
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fail("unknown property %q", k)
				}
			case map[string]any:
				if err := validateSchema(t, ap, obj[k], at+"/"+k); err != nil {
					return err
				}
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fail("not an array")
		}
		if mi, ok := s["minItems"].(float64); ok && float64(len(arr)) < mi {
			return fail("fewer than %v items", mi)
		}
		if s["uniqueItems"] == true {
			seen := map[string]bool{}
			for _, it := range arr {
				b, _ := json.Marshal(it)
				if seen[string(b)] {
					return fail("items not unique")
				}
				seen[string(b)] = true
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range arr {
				if err := validateSchema(t, items, it, fmt.Sprintf("%s/%d", at, i)); err != nil {
					return err
				}
			}
		}
	case "string", nil: // no type: propertyNames' {minLength}
		str, ok := v.(string)
		if !ok {
			return fail("not a string")
		}
		if ml, ok := s["minLength"].(float64); ok && float64(len([]rune(str))) < ml {
			return fail("shorter than %v", ml)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			return fail("does not match %s", p)
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok {
			if i, isInt := v.(int); isInt {
				f, ok = float64(i), true
			}
		}
		if !ok || (s["type"] == "integer" && f != math.Trunc(f)) {
			return fail("not an %v", s["type"])
		}
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fail("below %v", m)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fail("not a boolean")
		}
	default:
		t.Fatalf("%s: schema type %v not supported", at, s["type"])
	}
	if not, ok := s["not"].(map[string]any); ok && validateSchema(t, not, v, at+"(not)") == nil {
		return fail("matches what is excluded")
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			if e == v {
				return nil
			}
		}
		return fail("not one of %v", enum)
	}
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

// The README's example config file is valid for the core and for the schema, and shows a chain.
func TestReadmeConfigExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Configuration file\n")
	require.True(t, ok, "README has a Configuration file section")
	_, block, ok := strings.Cut(section, "```jsonc\n")
	require.True(t, ok, "the section has a jsonc example")
	example, _, ok := strings.Cut(block, "```")
	require.True(t, ok)

	cfg, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: "README.md", Text: example}})
	require.NoError(t, err)
	chains := 0
	for _, a := range cfg.Agents {
		if len(a.Models) >= 2 {
			chains++
		}
	}
	require.Positive(t, chains, "the example shows a chain of two models or more")

	plain, err := stripJSONC(example)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(plain, &doc))
	require.NoError(t, validateSchema(t, loadSchema(t), doc, ""))
}
