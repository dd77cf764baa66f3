package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jnode is a parsed JSON value with its object keys in file order, so that the first problem
// reported is the first in the file.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*jnode
	items []*jnode
	str   string
	num   json.Number
	b     bool
}

// parseJSONC parses JSON with comments (// and /* */) and trailing commas. It answers nil for a
// file with nothing in it but whitespace and comments.
func parseJSONC(file, text string) (*jnode, error) {
	src := strings.TrimPrefix(text, "\uFEFF")
	plain, err := stripJSONC(src)
	if err != nil {
		line, col := lineCol(src, err.(*jsoncError).offset)
		return nil, &ConfigError{File: file, Line: line, Column: col, Msg: err.Error()}
	}
	if len(bytes.TrimSpace(plain)) == 0 {
		return nil, nil
	}
	// encoding/json says exactly where the text stops being JSON; its token reader, used below
	// for the key order, does not.
	var probe any
	if err := json.Unmarshal(plain, &probe); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, &ConfigError{File: file, Line: 1, Column: 1, Msg: err.Error()}
		}
		off, msg := int(se.Offset)-1, se.Error()
		if int(se.Offset) >= len(plain) {
			off, msg = len(plain), "unexpected end of file"
		}
		line, col := lineCol(src, off)
		return nil, &ConfigError{File: file, Line: line, Column: col, Msg: msg}
	}
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.UseNumber()
	return readNode(dec)
}

type jsoncError struct {
	offset int
	msg    string
}

func (e *jsoncError) Error() string { return e.msg }

// stripJSONC blanks comments and trailing commas with spaces, keeping every newline, so offsets
// (and so lines and columns) in the result are those of the original text.
func stripJSONC(src string) ([]byte, error) {
	out := []byte(src)
	comma, commaPrev := -1, byte(0) // a pending comma and the significant byte before it
	prev := byte(0)                 // the last significant byte
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(out) && out[j] != '"' {
				if out[j] == '\\' {
					j++
				}
				if j < len(out) && out[j] == '\n' {
					break // JSON strings hold no newline: let the JSON parser say so
				}
				j++
			}
			i, prev, comma = j, '"', -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &jsoncError{offset: i, msg: "unterminated /* comment"}
			}
			for k := i; k < i+2+end+2; k++ {
				if out[k] != '\n' {
					out[k] = ' '
				}
			}
			i += 2 + end + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == ',':
			comma, commaPrev, prev = i, prev, c
		case c == ']' || c == '}':
			if comma >= 0 && commaPrev != '[' && commaPrev != '{' && commaPrev != ',' {
				out[comma] = ' '
			}
			comma, prev = -1, c
		default:
			comma, prev = -1, c
		}
	}
	return out, nil
}

// lineCol turns a byte offset into a 1-based line and column (in characters).
func lineCol(src string, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	before := src[:off]
	line := strings.Count(before, "\n") + 1
	start := strings.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCountInString(before[start:]) + 1
}

func readNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			n := &jnode{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
				n.vals = append(n.vals, val)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &jnode{kind: 'a'}
		for dec.More() {
			item, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &jnode{kind: 's', str: v}, nil
	case json.Number:
		return &jnode{kind: 'n', num: v}, nil
	case bool:
		return &jnode{kind: 'b', b: v}, nil
	}
	return &jnode{kind: 'z'}, nil
}

// render shows a value in an error, cut to a readable length.
func (n *jnode) render() string {
	var b strings.Builder
	n.write(&b)
	s := b.String()
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)
		s = string(r[:57]) + "…"
	}
	return s
}

func (n *jnode) write(b *strings.Builder) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(strconv.Quote(n.str))
	case 'n':
		b.WriteString(n.num.String())
	case 'b':
		b.WriteString(strconv.FormatBool(n.b))
	default:
		b.WriteString("null")
	}
}

// integer reads an integral number (1000, 1000.0 and 1e3 alike) that fits in an int64.
func (n *jnode) integer() (int64, bool) {
	if n.kind != 'n' {
		return 0, false
	}
	if i, err := strconv.ParseInt(n.num.String(), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(n.num.String(), 64)
	if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// number reads a finite number.
func (n *jnode) number() (float64, bool) {
	if n.kind != 'n' {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.num.String(), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// ---- the rules ----
