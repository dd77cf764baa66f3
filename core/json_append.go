package core

import (
	"encoding/json"
	"strconv"
)

// The pieces the hand-written encoders (abi_encode.go, abi_encode_parts.go, task_encode.go) are
// made of: a field after the first, written as encoding/json writes it.

// appendKey writes `,"key":`, a field after the first.
func appendKey(b []byte, key string) []byte {
	return append(append(append(b, `,"`...), key...), `":`...)
}

// appendKeyString writes `,"key":"value"`.
func appendKeyString(b []byte, key, v string) []byte {
	return appendJSONString(appendKey(b, key), v)
}

// appendOptString is appendKeyString for an omitempty field: nothing when v is empty.
func appendOptString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendKeyString(b, key, v)
}

// appendKeyValue writes `,"key":` and v as encoding/json writes it (the rare fields: prompts'
// parts, permissions, tool metadata).
func appendKeyValue(b []byte, key string, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(appendKey(b, key), raw...), nil
}

// appendJSONString writes s as a JSON string, as encoding/json does. Text with nothing to
// escape (IDs, kinds, most messages) is copied; anything else (quotes, control characters, the
// HTML characters encoding/json escapes, any non-ASCII byte) goes through encoding/json itself,
// so the two can never differ.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always encodes
			return append(b, raw...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// appendStrings writes a string slice as encoding/json does: null when nil.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendKeyInt writes `,"key":n`.
func appendKeyInt(b []byte, key string, n int64) []byte {
	return strconv.AppendInt(appendKey(b, key), n, 10)
}

// appendOptInt is appendKeyInt for an omitempty field: nothing when n is 0.
func appendOptInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	return appendKeyInt(b, key, n)
}
