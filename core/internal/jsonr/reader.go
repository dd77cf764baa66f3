package jsonr

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// State is how a read ended so far.
type State uint8

const (
	OK     State = iota
	Bad          // encoding/json returns an error for this input
	Unsure       // decode with encoding/json
)

// maxDepth bounds the nesting a skip follows; deeper input is left to encoding/json (whose own
// limit is 10,000).
const maxDepth = 1000

// Reader reads one JSON text. Its methods do nothing once the state is not OK.
type Reader struct {
	b     []byte
	i     int
	st    State
	key   []byte
	depth int
}

// New returns a reader of b.
func New(b []byte) Reader { return Reader{b: b} }

// State is the state of the read so far.
func (r *Reader) State() State { return r.st }

// Fail sets the state (the worse of the two wins: Unsure over Bad, since encoding/json decides).
func (r *Reader) Fail(s State) {
	if s > r.st {
		r.st = s
	}
}

// Pos is the offset of the next byte to read.
func (r *Reader) Pos() int { return r.i }

// End checks that only whitespace follows the value read, and returns the final state.
func (r *Reader) End() State {
	r.ws()
	if r.st == OK && r.i != len(r.b) {
		r.st = Bad
	}
	return r.st
}

func (r *Reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, 0 at the end (never valid there).
func (r *Reader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// Object starts reading a value into a struct: true at an object (its fields follow, read with
// Field), false at null (the struct stays as it is) or at any other value (Bad: a type error).
func (r *Reader) Object() bool {
	if r.st != OK {
		return false
	}
	switch r.peek() {
	case '{':
		r.i++
		return true
	case 'n':
		r.literal("null")
	default:
		r.st = Bad
	}
	return false
}

// Field reads the n-th key of the object being read (n counts from 0) and the colon after it:
// false at the object's end or on a failure. The key is then Key.
func (r *Reader) Field(n int) bool {
	if r.st != OK {
		return false
	}
	c := r.peek()
	if c == '}' {
		r.i++
		return false
	}
	if n > 0 {
		if c != ',' {
			r.st = Bad
			return false
		}
		r.i++
		c = r.peek()
	}
	if c != '"' {
		r.st = Bad
		return false
	}
	start := r.i + 1
	end, plain := r.scanString()
	if r.st != OK {
		return false
	}
	if !plain {
		// An escaped or non-ASCII key may name a field (encoding/json unescapes and folds it).
		r.st = Unsure
		return false
	}
	r.key = r.b[start:end]
	if r.peek() != ':' {
		r.st = Bad
		return false
	}
	r.i++
	r.ws()
	return true
}

// Key is the key Field read; it is valid until the next Field.
func (r *Reader) Key() []byte { return r.key }

// Unknown skips the value of a key that is none of the object's fields, or gives up (Unsure)
// when it matches one of them case-insensitively, as encoding/json would then decode it.
func (r *Reader) Unknown(fields []string) {
	for _, f := range fields {
		if len(f) == len(r.key) && foldEqual(f, r.key) {
			r.st = Unsure
			return
		}
	}
	r.Skip()
}

// foldEqual compares ASCII names as encoding/json folds them (letters only).
func foldEqual(f string, k []byte) bool {
	for i := range len(f) {
		a, b := f[i], k[i]
		if 'a' <= a && a <= 'z' {
			a -= 'a' - 'A'
		}
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

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

// Skip reads past one value, checking it is valid JSON.
func (r *Reader) Skip() {
	if r.st != OK {
		return
	}
	switch c := r.peek(); {
	case c == '"':
		r.scanString()
	case c == '{', c == '[':
		r.skipNested(c)
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		r.scanNumber()
	default:
		r.st = Bad
	}
}

func (r *Reader) skipNested(open byte) {
	if r.depth++; r.depth > maxDepth {
		r.st = Unsure
		return
	}
	r.i++
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	for n := 0; r.st == OK; n++ {
		c := r.peek()
		if c == closing {
			r.i++
			r.depth--
			return
		}
		if n > 0 {
			if c != ',' {
				r.st = Bad
				return
			}
			r.i++
			c = r.peek()
		}
		if open == '{' {
			if c != '"' {
				r.st = Bad
				return
			}
			r.scanString()
			if r.peek() != ':' {
				r.st = Bad
				return
			}
			r.i++
		}
		r.Skip()
	}
}

// literal reads true, false or null.
func (r *Reader) literal(word string) bool {
	if len(r.b)-r.i >= len(word) && string(r.b[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return true
	}
	r.st = Bad
	return false
}

// scanNumber reads past a number as JSON's grammar defines it.
func (r *Reader) scanNumber() {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		r.st = Bad
		return
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			r.st = Bad
			return
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			r.st = Bad
			return
		}
		i = j
	}
	r.i = i
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// scanString reads past a string (r.i at its opening quote) and returns where its content ends;
// plain says the content is ASCII without escapes, so it is its own value. Eight bytes at a time
// while none is special: a part's text is most of a step's input, and a byte loop inside
// WebAssembly was the reader's largest cost.
func (r *Reader) scanString() (end int, plain bool) {
	b := r.b
	plain = true
	for i := r.i + 1; ; i++ {
		for i+8 <= len(b) && !special(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			return i, plain
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				r.st = Bad
				return 0, false
			}
			i++
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					r.st = Bad
					return 0, false
				}
				i += 4
			default:
				r.st = Bad
				return 0, false
			}
		case c < 0x20:
			r.st = Bad
			return 0, false
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	r.st = Bad
	return 0, false
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special says whether any of the eight bytes of x is a quote, a backslash, a control character
// or not ASCII (it may say so of a plain byte after one of those; the byte loop then decides).
func special(x uint64) bool {
	zeroIn := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return (x&highs)|((x-ones*0x20) & ^x & highs)|zeroIn(x^(ones*'"'))|zeroIn(x^(ones*'\\')) != 0
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// Null reads a null if one comes next.
func (r *Reader) Null() bool {
	if r.st != OK || r.peek() != 'n' {
		return false
	}
	return r.literal("null")
}

// Array starts reading a value into a slice: true at an array (its elements follow, each after
// Element), false at any other value (Bad: a type error; the caller reads null itself).
func (r *Reader) Array() bool {
	if r.st != OK {
		return false
	}
	if r.peek() != '[' {
		r.st = Bad
		return false
	}
	r.i++
	return true
}

// Element moves to the n-th element of the array being read (n counts from 0): false at the
// array's end or on a failure.
func (r *Reader) Element(n int) bool {
	if r.st != OK {
		return false
	}
	c := r.peek()
	if c == ']' {
		r.i++
		return false
	}
	if n > 0 {
		if c != ',' {
			r.st = Bad
			return false
		}
		r.i++
		if r.peek() == ']' {
			r.st = Bad
			return false
		}
	}
	return true
}
