package jsonw

import (
	"encoding/json"
	"math"
	"strconv"
)

// Key writes `,"key":`, a field after the first.
func Key(b []byte, key string) []byte {
	return append(append(append(b, `,"`...), key...), `":`...)
}

// KeyString writes `,"key":"value"`.
func KeyString(b []byte, key, v string) []byte {
	return String(Key(b, key), v)
}

// OptString is KeyString for an omitempty field: nothing when v is empty.
func OptString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return KeyString(b, key, v)
}

// KeyValue writes `,"key":` and v as encoding/json writes it (the rare fields: prompts'
// parts, permissions, tool metadata).
func KeyValue(b []byte, key string, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(Key(b, key), raw...), nil
}

// String writes s as a JSON string, as encoding/json does. Text with nothing to
// escape (IDs, kinds, most messages) is copied; anything else (quotes, control characters, the
// HTML characters encoding/json escapes, any non-ASCII byte) goes through encoding/json itself,
// so the two can never differ.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always encodes
			return append(b, raw...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// Strings writes a string slice as encoding/json does: null when nil.
func Strings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, s)
	}
	return append(b, ']')
}

// KeyInt writes `,"key":n`.
func KeyInt(b []byte, key string, n int64) []byte {
	return strconv.AppendInt(Key(b, key), n, 10)
}

// OptInt is KeyInt for an omitempty field: nothing when n is 0.
func OptInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	return KeyInt(b, key, n)
}

// Float writes a finite f as encoding/json does: plain digits from 1e-6 to 1e21, an exponent
// (without a leading zero) outside.
func Float(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
