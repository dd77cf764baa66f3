package history

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/task"
)

// Restoring 10,000 tasks means decoding about 10 MB of JSON, and encoding/json's byte-by-byte
// scanner (run twice: validate, then decode) costs ten times more inside WebAssembly than
// natively: over a second in the plugin. Decode reads the flat records the core itself
// writes with a scanner that skips through strings with IndexByte, and hands anything it does
// not expect (floats, unknown keys, bad escapes) to encoding/json, so the result is always what
// encoding/json would give. FuzzDecodeRecord holds the two to that.

// errSlowPath means the fast decoder declined the input; encoding/json decides.
var errSlowPath = errors.New("not a record the fast decoder reads")

// structFields holds each struct type's JSON names and field indexes, found once per type by
// reflection, so the decoder follows the structs as they change.
var structFields sync.Map // reflect.Type -> *jsonFields

// jsonFields are a struct's JSON names: in declaration order, which is the order encoding/json
// writes them in, and by name.
type jsonFields struct {
	names  []string
	quoted []string // each name as its key is written: "name":
	index  []int
	byName map[string]int
}

// expected reads the key a record the core wrote has next (the field after the last one read, in
// declaration order) by comparing bytes: no scan of the key, no lookup. Inside WebAssembly that
// is a third of reading a task's head. Not ok: b holds anything else (another key, the end, a key
// with escapes), which nextKey and find then read. first says no member has been read yet.
func (fs *jsonFields) expected(b string, first bool, next int) (i int, rest string, ok bool) {
	if next >= len(fs.quoted) {
		return 0, "", false
	}
	if !first {
		if len(b) == 0 || b[0] != ',' {
			return 0, "", false
		}
		b = b[1:]
	}
	q := fs.quoted[next]
	if len(b) < len(q) || b[:len(q)] != q {
		return 0, "", false
	}
	return fs.index[next], b[len(q):], true
}

// find returns the field index for key, looking first at the names from *next on (a record the
// core wrote has its keys in declaration order: no hashing then), and moves *next past it.
func (fs *jsonFields) find(key string, next *int) (int, bool) {
	for k := *next; k < len(fs.names); k++ {
		if fs.names[k] == key {
			*next = k + 1
			return fs.index[k], true
		}
	}
	i, ok := fs.byName[key]
	return i, ok
}

func fieldsOf(rt reflect.Type) *jsonFields {
	if m, ok := structFields.Load(rt); ok {
		return m.(*jsonFields)
	}
	out := &jsonFields{byName: map[string]int{}}
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" && i < 64 {
			out.names = append(out.names, name)
			out.quoted = append(out.quoted, `"`+name+`":`)
			out.index = append(out.index, i)
			out.byName[name] = i
		}
	}
	structFields.Store(rt, out)
	return out
}

// Decode decodes one history record's JSON.
func Decode(b string) (Record, error) {
	if r, err := fastRecord(b); err == nil {
		return r, nil
	}
	var r Record
	err := json.Unmarshal([]byte(b), &r)
	if r.Task != nil {
		r.Task.AdoptLegacyID()
	}
	return r, err
}

// fastRecord reads {"task":{...}}, {"keep":"…","task":{...}} or {"removed":"id"} with no
// whitespace, as the core writes them.
func fastRecord(b string) (Record, error) {
	var r Record
	if strings.HasPrefix(b, `{"keep":"`) {
		return fastKeepRecord(b)
	}
	switch {
	case strings.HasPrefix(b, (`{"removed":"`)):
		s, rest, err := fastString(b[len(`{"removed":`):])
		if err != nil || rest != "}" {
			return r, errSlowPath
		}
		r.Removed = s
		return r, nil
	case strings.HasPrefix(b, (`{"task":{`)) && strings.HasSuffix(b, ("}}")):
		t := &task.Task{}
		rest, _, _, err := fastTaskFields(b[len(`{"task":`):len(b)-1], t, noStop)
		if err != nil || len(rest) != 0 {
			return r, errSlowPath
		}
		t.AdoptLegacyID()
		r.Task = t
		return r, nil
	}
	return r, errSlowPath
}

// fastStruct fills the struct v from a JSON object with no whitespace: strings, integers,
// booleans, string arrays and nested structs (or pointers to them) are read here; null and any
// other shape are cut out and given to encoding/json, or decline the whole record.
func fastStruct(b string, v reflect.Value) (string, error) {
	fields := fieldsOf(v.Type())
	if len(b) == 0 || b[0] != '{' {
		return "", errSlowPath
	}
	b = b[1:]
	var seen uint64
	next := 0
	for first := true; ; first = false {
		i, rest, end, ok := fields.member(b, first, &next, &seen)
		if !ok {
			return "", errSlowPath
		}
		if end {
			return rest, nil
		}
		var err error
		if b, err = fastValue(rest, v.Field(i)); err != nil {
			return "", err
		}
	}
}

// member reads, inside an object with no whitespace, either its end (end, with rest after the
// '}') or its next member's key, as its field's index (i, with rest after the ':'), and marks the
// field in seen. Not ok: what encoding/json decides instead (a key no field has, which it matches
// case-insensitively or skips; a repeated key, which it merges; anything malformed). next is
// where the search in declaration order goes on from.
func (fs *jsonFields) member(b string, first bool, next *int, seen *uint64) (i int, rest string, end, ok bool) {
	if i, rest, ok = fs.expected(b, first, *next); ok {
		*next++
	} else {
		var key string
		if key, rest, end, ok = nextKey(b, first); !ok || end {
			return 0, rest, end, ok
		}
		if i, ok = fs.find(key, next); !ok {
			return 0, "", false, false
		}
	}
	if *seen&(1<<i) != 0 {
		return 0, "", false, false
	}
	*seen |= 1 << i
	return i, rest, false, true
}

// nextKey reads, inside an object with no whitespace, either its end (end, with rest after the
// '}') or its next key (with rest after the ':'); first says no member has been read yet. Not
// ok: anything else.
func nextKey(b string, first bool) (key, rest string, end, ok bool) {
	if len(b) > 0 && b[0] == '}' {
		return "", b[1:], true, true
	}
	if !first {
		if len(b) == 0 || b[0] != ',' {
			return "", "", false, false
		}
		b = b[1:]
	}
	key, rest, err := fastString(b)
	if err != nil || len(rest) == 0 || rest[0] != ':' {
		return "", "", false, false
	}
	return key, rest[1:], false, true
}

// fastValue reads one value at the start of b into f and returns the rest of b.
func fastValue(b string, f reflect.Value) (string, error) {
	if len(b) == 0 {
		return "", errSlowPath
	}
	switch c := b[0]; {
	case c == '"':
		s, rest, err := fastString(b)
		if err != nil || f.Kind() != reflect.String {
			return "", errSlowPath
		}
		f.SetString(s)
		return rest, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if f.Kind() == reflect.Float64 {
			x, rest, err := fastFloat(b)
			if err != nil {
				return "", errSlowPath
			}
			f.SetFloat(x)
			return rest, nil
		}
		if f.Kind() != reflect.Int64 && f.Kind() != reflect.Int {
			return "", errSlowPath
		}
		x, rest, err := fastInt(b)
		if err != nil || f.OverflowInt(x) {
			return "", errSlowPath
		}
		f.SetInt(x)
		return rest, nil
	case c == 't' || c == 'f':
		if f.Kind() != reflect.Bool {
			return "", errSlowPath
		}
		x, rest, err := fastBool(b)
		if err != nil {
			return "", errSlowPath
		}
		f.SetBool(x)
		return rest, nil
	case c == '{':
		switch {
		case f.Kind() == reflect.Struct:
			return fastStruct(b, f)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			p := reflect.New(f.Type().Elem())
			rest, err := fastStruct(b, p.Elem())
			if err != nil {
				return "", err
			}
			f.Set(p)
			return rest, nil
		}
		return "", errSlowPath
	case c == '[':
		if f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct {
			return fastStructs(b, f)
		}
		if f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.String {
			return "", errSlowPath
		}
		out, rest, err := fastStrings(b)
		if err != nil {
			return "", errSlowPath
		}
		sl := reflect.MakeSlice(f.Type(), len(out), len(out))
		for i, s := range out {
			sl.Index(i).SetString(s)
		}
		f.Set(sl)
		return rest, nil
	case c == 'n':
		if !strings.HasPrefix(b, ("null")) {
			return "", errSlowPath
		}
		// encoding/json: null leaves a value as it was and sets a pointer, slice or map to nil.
		switch f.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			f.SetZero()
		}
		return b[4:], nil
	}
	return "", errSlowPath
}

// fastStructs reads an array of objects into f, a slice of structs (a task's stalls).
func fastStructs(b string, f reflect.Value) (string, error) {
	b = b[1:]
	sl := reflect.MakeSlice(f.Type(), 0, 2)
	for len(b) > 0 && b[0] != ']' {
		e := reflect.New(f.Type().Elem()).Elem()
		rest, err := fastStruct(b, e)
		if err != nil {
			return "", err
		}
		sl = reflect.Append(sl, e)
		if b = rest; len(b) > 1 && b[0] == ',' && b[1] == '{' {
			b = b[1:]
		}
	}
	if len(b) == 0 {
		return "", errSlowPath
	}
	f.Set(sl)
	return b[1:], nil
}

// fastString reads a JSON string at the start of b and returns it and the rest of b.
func fastString(b string) (string, string, error) {
	if len(b) == 0 || b[0] != '"' {
		return "", "", errSlowPath
	}
	b = b[1:]
	// The common string: printable ASCII, no escapes. One pass finds its end.
	if i := plainASCIIPrefix(b); i < len(b) && b[i] == '"' {
		return b[:i], b[i+1:], nil
	}
	end := strings.IndexByte(b, '"')
	if end < 0 {
		return "", "", errSlowPath
	}
	if strings.IndexByte(b[:end], '\\') < 0 {
		// No escapes: the string is a slice of the history itself, with no copy. Allocating
		// each string costs more than decoding it inside WebAssembly.
		s := b[:end]
		if !validPlain(s) {
			return "", "", errSlowPath
		}
		return s, b[end+1:], nil
	}
	var out []byte
	i := 0
	for {
		if i >= len(b) {
			return "", "", errSlowPath
		}
		j := strings.IndexAny(b[i:], "\"\\")
		if j < 0 {
			return "", "", errSlowPath
		}
		if !validPlain(b[i : i+j]) {
			return "", "", errSlowPath
		}
		out = append(out, b[i:i+j]...)
		i += j
		if b[i] == '"' {
			return string(out), b[i+1:], nil
		}
		if i+1 >= len(b) {
			return "", "", errSlowPath
		}
		switch b[i+1] {
		case '"', '\\', '/':
			out = append(out, b[i+1])
			i += 2
		case 'b':
			out, i = append(out, '\b'), i+2
		case 'f':
			out, i = append(out, '\f'), i+2
		case 'n':
			out, i = append(out, '\n'), i+2
		case 'r':
			out, i = append(out, '\r'), i+2
		case 't':
			out, i = append(out, '\t'), i+2
		case 'u':
			r, n := hex4(b[i+2:])
			if n < 0 {
				return "", "", errSlowPath
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, n2 := rune(-1), -1
				if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					r2, n2 = hex4(b[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); n2 >= 0 && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", "", errSlowPath
		}
	}
}

// validPlain: unescaped string bytes encoding/json would keep as they are (no control
// characters, valid UTF-8; it would replace invalid bytes, which the slow path does).
//
// The callers pass text with no quote or backslash; plainASCIIPrefix skips its printable ASCII
// eight bytes at a time, and only what follows gets the byte-by-byte check.
func validPlain(s string) bool {
	i := plainASCIIPrefix(s)
	return i == len(s) || validPlainSlow(s[i:])
}

// plainASCIIPrefix returns the length of the longest prefix of s made of bytes from 0x20 to
// 0x7f other than '"' and '\\': where a plain string ends, or where it needs a closer look.
// Eight bytes at a time: inside WebAssembly several times quicker than a byte loop.
func plainASCIIPrefix(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// Any byte below 0x20 or from 0x80, or equal to '"' or '\\', sets its top bit here
		// (bytes after such a byte may too: the byte loop below finds the first one exactly).
		if ((w-ones*0x20)|w|((q-ones)&^q)|((bs-ones)&^bs))&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

func validPlainSlow(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return false
		}
	}
	return utf8.ValidString(s)
}

func hex4(b string) (rune, int) {
	if len(b) < 4 {
		return 0, -1
	}
	x, err := strconv.ParseUint(b[:4], 16, 32)
	if err != nil {
		return 0, -1
	}
	return rune(x), 4
}
