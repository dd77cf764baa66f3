package jsonw

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
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

// String writes s as a JSON string, as encoding/json does (HTML characters, U+2028, U+2029 and
// control characters escaped, invalid UTF-8 as \ufffd). By hand: through json.Marshal, a string
// with anything to escape (a history line inside its append effect, a view with a non-ASCII
// character) was the reflection left on a step's path. FuzzStringMatchesEncodingJSON holds the two
// to the same bytes.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters, and <, > and &
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes String copies as they are.
var plain = func() (p [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return p
}()

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
