package core

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// A tool argument the tool does not take is refused, naming it and what the tool takes: a key
// ignored in silence runs the task without what the model meant (`budget: {dollars: 5}` ran with
// no budget at all). The keys known are the json names of the arguments' struct, at every level.

// checkKeys refuses the keys of raw (a JSON object) that typ, a struct, has no field for, and
// those of its object fields in turn; where names the object ("" for the arguments themselves).
func checkKeys(raw json.RawMessage, typ reflect.Type, where string) error {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	var obj map[string]json.RawMessage
	if typ.Kind() != reflect.Struct || json.Unmarshal(raw, &obj) != nil {
		return nil // not an object: the type check names it
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = typ.Field(i).Type
			names = append(names, name)
		}
	}
	var unknown []string
	for k := range obj {
		if _, ok := fields[k]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if where == "" {
			return fmt.Errorf(argsUnknownFmt, strings.Join(unknown, ", "), strings.Join(names, ", "))
		}
		return fmt.Errorf(argKeysUnknownFmt, where, strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkKeys(obj[k], fields[k], strings.TrimPrefix(where+"."+k, ".")); err != nil {
			return err
		}
	}
	return nil
}
