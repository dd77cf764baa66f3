package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
)

// The ABI's types, written as TypeScript interfaces from the Go types and their json tags. A
// field is optional when its tag says omitempty (or omitzero) or it is a pointer; json.RawMessage
// and any are unknown; a named string type or a field with a fixed set of values is their union.

// abiRoots are the envelope's types; the types they use follow by themselves.
var abiRoots = []reflect.Type{
	reflect.TypeFor[abi.Request](),
	reflect.TypeFor[abi.Response](),
	reflect.TypeFor[core.Event](),
	reflect.TypeFor[core.Effect](),
	reflect.TypeFor[core.AgentInfo](),
	// The status API's answer that only the dashboard reads with types of its own.
	reflect.TypeFor[httpapi.APIConversation](),
	// The views the terminal UI module draws (GET /v1/views/...).
	reflect.TypeFor[view.Section](),
	reflect.TypeFor[view.List](),
	reflect.TypeFor[view.Timeline](),
}

// tsNames renames the Go types whose own names would clash with TypeScript's globals (Request,
// Response, Event) or say too little outside the core.
var tsNames = map[reflect.Type]string{
	reflect.TypeFor[abi.Request]():      "CoreRequest",
	reflect.TypeFor[abi.Response]():     "CoreResponse",
	reflect.TypeFor[config.Config]():    "CoreConfig",
	reflect.TypeFor[core.Event]():       "CoreEventFields",
	reflect.TypeFor[httpapi.Request]():  "CoreHTTPRequest",
	reflect.TypeFor[httpapi.Response](): "CoreHTTPResponse",
	reflect.TypeFor[view.Row]():         "ViewRow",
	reflect.TypeFor[view.Section]():     "ViewSection",
	reflect.TypeFor[view.List]():        "ViewList",
	reflect.TypeFor[view.Timeline]():    "ViewTimeline",
	reflect.TypeFor[view.Bar]():         "ViewBar",
	reflect.TypeFor[view.Segment]():     "ViewSegment",
}

// typeValues are the values of the named string types.
var typeValues = map[reflect.Type][]string{
	reflect.TypeFor[task.Status](): {
		string(task.StatusRunning), string(task.StatusCompleted), string(task.StatusError),
		string(task.StatusCancelled), string(task.StatusResumed), string(task.StatusQueued),
	},
}

// fieldValues are the values of the plain string fields that take only a few.
var fieldValues = map[string][]string{
	"NotifyConfig.Wake":   {config.WakeBatch, config.WakeEach},
	"NotifyConfig.Format": {config.FormatPlain, config.FormatMarkdown},
	"ArgSpec.Type":        {"string", "boolean", "number", "object"},
	"TextPart.Type":       {"text"},
	"Row.Group":           {view.GroupRunning, view.GroupQueued, view.GroupFinished},
	"Row.Tone":            {view.ToneAccent, view.ToneMuted, view.ToneSuccess, view.ToneError, view.ToneWarning},
	"APIMessage.Type":     {httpapi.MsgPrompt, httpapi.MsgReply, httpapi.MsgTools, httpapi.MsgPartial, httpapi.MsgError},
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

type tsWriter struct {
	docs    *docSet
	done    map[reflect.Type]bool
	pending []reflect.Type
	out     strings.Builder
}

// abiTypes writes the interfaces of abiRoots and of every struct type they reach, roots first.
func abiTypes(d *docSet) (string, error) {
	w := &tsWriter{docs: d, done: map[reflect.Type]bool{}}
	w.pending = append(w.pending, abiRoots...)
	for len(w.pending) > 0 {
		t := w.pending[0]
		w.pending = w.pending[1:]
		if w.done[t] {
			continue
		}
		w.done[t] = true
		if err := w.writeStruct(t); err != nil {
			return "", err
		}
	}
	return w.out.String(), nil
}

func (w *tsWriter) name(t reflect.Type) string {
	if n, ok := tsNames[t]; ok {
		return n
	}
	return t.Name()
}

func (w *tsWriter) writeStruct(t reflect.Type) error {
	w.out.WriteString("\n")
	d := w.docs.of(t.PkgPath())
	w.out.WriteString(jsDoc(d.types[t.Name()], ""))
	fmt.Fprintf(&w.out, "export interface %s {\n", w.name(t))
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") || f.Type.Kind() == reflect.Pointer
		ts, err := w.typeOf(f.Type, t.Name()+"."+f.Name)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		w.out.WriteString(jsDoc(d.fields[t.Name()][f.Name], "  "))
		q := ""
		if optional {
			q = "?"
		}
		fmt.Fprintf(&w.out, "  %s%s: %s;\n", name, q, ts)
	}
	w.out.WriteString("}\n")
	return nil
}

func (w *tsWriter) typeOf(t reflect.Type, field string) (string, error) {
	if t == rawMessage {
		return "unknown", nil
	}
	if v, ok := typeValues[t]; ok {
		return union(v), nil
	}
	switch t.Kind() {
	case reflect.String:
		if v, ok := fieldValues[field]; ok {
			return union(v), nil
		}
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Interface:
		return "unknown", nil
	case reflect.Pointer:
		return w.typeOf(t.Elem(), field)
	case reflect.Slice:
		e, err := w.typeOf(t.Elem(), field)
		if err != nil {
			return "", err
		}
		if strings.Contains(e, " ") {
			e = "(" + e + ")"
		}
		return e + "[]", nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", fmt.Errorf("map key %s is not a string", t.Key())
		}
		e, err := w.typeOf(t.Elem(), field)
		if err != nil {
			return "", err
		}
		return "Record<string, " + e + ">", nil
	case reflect.Struct:
		if t.Name() == "" {
			return "", fmt.Errorf("anonymous struct")
		}
		if !w.done[t] {
			w.pending = append(w.pending, t)
		}
		return w.name(t), nil
	}
	return "", fmt.Errorf("no TypeScript for %s", t)
}

func union(values []string) string {
	q := make([]string, len(values))
	for i, s := range values {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " | ")
}
