package jsonr

import (
	"encoding/binary"
	"unicode/utf8"
)

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
