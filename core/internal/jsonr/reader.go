package jsonr

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

// Field's and Element's opening steps are alike on purpose: shared through one method (not
// inlined), every hand-decoded event took 4 to 8% longer (BenchmarkDecode).

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
