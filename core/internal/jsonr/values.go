package jsonr

import (
	"strconv"
	"unsafe"
)

// String reads a string into dst; null leaves it as it is.
func (r *Reader) String(dst *string) {
	if r.st != OK {
		return
	}
	switch r.peek() {
	case '"':
		start := r.i + 1
		end, plain := r.scanString()
		if r.st != OK {
			return
		}
		if plain {
			*dst = string(r.b[start:end])
		} else {
			*dst = string(unquote(r.b[start:end]))
		}
	case 'n':
		r.literal("null")
	default:
		r.st = Bad
	}
}

// Bool reads true or false into dst; null leaves it as it is.
func (r *Reader) Bool(dst *bool) {
	if r.st != OK {
		return
	}
	switch r.peek() {
	case 't':
		if r.literal("true") {
			*dst = true
		}
	case 'f':
		if r.literal("false") {
			*dst = false
		}
	case 'n':
		r.literal("null")
	default:
		r.st = Bad
	}
}

// Int reads an integer into dst; null leaves it as it is. A fraction, an exponent or a number
// out of range is a type error, as strconv.ParseInt judges it for encoding/json.
func (r *Reader) Int(dst *int64) {
	if n, ok := r.number(); ok {
		v, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(n), len(n)), 10, 64)
		if err != nil {
			r.st = Bad
			return
		}
		*dst = v
	}
}

// IntN is Int for an int field (64 bits wide on every target the core runs on).
func (r *Reader) IntN(dst *int) {
	v := int64(*dst)
	r.Int(&v)
	if r.st == OK {
		*dst = int(v)
	}
}

// Float reads a number into dst; null leaves it as it is.
func (r *Reader) Float(dst *float64) {
	if n, ok := r.number(); ok {
		v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(n), len(n)), 64)
		if err != nil {
			r.st = Bad
			return
		}
		*dst = v
	}
}

// number reads a number's text: false at null (consumed) and on a failure.
func (r *Reader) number() ([]byte, bool) {
	if r.st != OK {
		return nil, false
	}
	switch c := r.peek(); {
	case c == '-' || ('0' <= c && c <= '9'):
		start := r.i
		r.scanNumber()
		return r.b[start:r.i], r.st == OK
	case c == 'n':
		r.literal("null")
	default:
		r.st = Bad
	}
	return nil, false
}

// Raw skips a value and returns its text as encoding/json gives a json.RawMessage (from its
// first byte to its last); the caller copies what it keeps.
func (r *Reader) Raw() []byte {
	if r.st != OK {
		return nil
	}
	r.ws()
	start := r.i
	r.Skip()
	if r.st != OK {
		return nil
	}
	return r.b[start:r.i]
}
