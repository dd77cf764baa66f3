package forkctx

import "unicode/utf8"

// EstimateTokens estimates how many tokens a BPE tokenizer (OpenAI's o200k_base and cl100k_base;
// other vendors' tokenizers are of the same family) makes of s, without a vocabulary.
//
// It walks s the way those tokenizers' pre-tokenizer splits text (a word with at most one
// leading space or punctuation character, runs of at most three digits, runs of punctuation,
// whitespace pieces) and charges each piece what such a piece costs on average: a word of up to
// 7 letters is one token, each letter past that a fifth of one, each camelCase or ALLCAPS part
// a word of its own; a random-looking identifier (call IDs, hashes, base64) about two thirds of
// a token per character; a non-ASCII character up to a token, by script.
//
// Measured against gpt-tokenizer on core/forkctx/testdata/tokens (conversation text: prose, Go and
// TypeScript, JSON, shell output, a rendered fork context), every file is within ±10% on both
// encodings (core/forkctx/tokens_test.go checks it; the figures are in that file). Scripts other than
// Latin are rough: there the two encodings differ by a third and the estimate sits between
// them, nearer cl100k_base.
func EstimateTokens(s string) int {
	milli := estimateMilliTokens(s)
	if milli == 0 {
		return 0
	}
	if t := (milli + 500) / 1000; t > 0 {
		return t
	}
	return 1
}

// Costs of EstimateTokens, in thousandths of a token (integers, so that every platform gives
// the same count).
const (
	tokWord          = 1000 // a letter segment of up to tokLongFrom letters
	tokLongFrom      = 7
	tokLongPerChar   = 200  // each letter of a segment past tokLongFrom
	tokCapsPerChar   = 400  // an ALLCAPS segment, at least tokWord
	tokLead          = 200  // a punctuation character or tab joined to the word after it
	tokPunct         = 1000 // a run of 1 to 3 punctuation characters
	tokPunctPerChar  = 400  // each character of a longer run
	tokSpace         = 1000 // a whitespace piece
	tokNewline       = 1000 // whitespace holding line breaks
	tokDigits        = 1000 // up to three digits
	tokRandomPerChar = 650  // each character of a random-looking run of letters and digits
	tokRandomMinLen  = 8    // such a run is at least this long and switches between
	tokRandomSwitch  = 4    // lower case, upper case and digits once every tokRandomSwitch characters
	tokLatin         = 1000 // an accented Latin letter
	tokOtherLetter   = 500  // Greek, Cyrillic, Hebrew, Arabic... (below U+2000)
	tokCJK           = 900  // CJK, kana, Hangul, full-width forms
	tokSymbol        = 1200 // any other character: symbols, arrows, emoji
)

func tokIsLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func tokIsDigit(c byte) bool  { return c >= '0' && c <= '9' }
func tokIsUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func tokIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// tokClass: 0 digit, 1 upper case, 2 lower case.
func tokClass(c byte) int {
	switch {
	case tokIsDigit(c):
		return 0
	case tokIsUpper(c):
		return 1
	}
	return 2
}

func estimateMilliTokens(s string) int {
	cost := 0
	n := len(s)
	lead := false      // a punctuation character or tab joins the next word
	spaceLead := false // a space joined the punctuation that follows
	for i := 0; i < n; {
		c := s[i]
		switch {
		case tokIsLetter(c) || tokIsDigit(c):
			j, switches := i, 0
			for j < n && (tokIsLetter(s[j]) || tokIsDigit(s[j])) {
				// lower to upper, or to or from digits; upper to lower is just a capital
				if j > i && tokClass(s[j]) != tokClass(s[j-1]) && !(tokClass(s[j-1]) == 1 && tokClass(s[j]) == 2) {
					switches++
				}
				j++
			}
			if j-i >= tokRandomMinLen && switches*tokRandomSwitch >= j-i {
				cost += (j - i) * tokRandomPerChar
				if lead {
					cost += tokLead
				}
			} else {
				for k := i; k < j; {
					m := k
					if tokIsDigit(s[k]) {
						for m < j && tokIsDigit(s[m]) {
							m++
						}
						cost += (m - k + 2) / 3 * tokDigits
					} else {
						for m < j && tokIsLetter(s[m]) {
							m++
						}
						cost += tokWordCost(s[k:m])
						if lead {
							cost += tokLead
						}
					}
					lead = false
					k = m
				}
			}
			lead = false
			i = j
		case tokIsSpace(c):
			j, lastBreak := i, -1
			for j < n && tokIsSpace(s[j]) {
				if s[j] == '\n' || s[j] == '\r' {
					lastBreak = j
				}
				j++
			}
			rest := j - i // the whitespace after the last line break
			if lastBreak >= 0 {
				cost += tokNewline
				rest = j - lastBreak - 1
			}
			if rest > 0 {
				if j < n && !tokIsDigit(s[j]) {
					// The last character joins what follows; the others are one piece.
					if rest > 1 {
						cost += tokSpace
					}
					if s[j-1] == '\t' && tokIsLetter(s[j]) {
						lead = true
					}
					if s[j-1] == ' ' && !tokIsLetter(s[j]) && s[j] < 0x80 {
						spaceLead = true
					}
				} else if rest > 1 {
					cost += 2 * tokSpace // before digits or at the end, the last space is alone
				} else {
					cost += tokSpace
				}
			}
			i = j
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r >= 0x2E80 && r <= 0xD7FF || r >= 0xF900 && r <= 0xFAFF || r >= 0xFF00 && r <= 0xFFEF:
				cost += tokCJK
			case r < 0x250 || r >= 0x1E00 && r <= 0x1EFF:
				cost += tokLatin
			case r < 0x2000:
				cost += tokOtherLetter
			default:
				cost += tokSymbol
			}
			spaceLead = false
			i += size
		default: // ASCII punctuation
			j := i
			for j < n && s[j] < 0x80 && !tokIsLetter(s[j]) && !tokIsDigit(s[j]) && !tokIsSpace(s[j]) {
				j++
			}
			if j-i == 1 && j < n && tokIsLetter(s[j]) && !spaceLead {
				lead = true
				i = j
				continue
			}
			spaceLead = false
			if j-i <= 3 {
				cost += tokPunct
			} else {
				cost += (j - i) * tokPunctPerChar
			}
			for j < n && (s[j] == '\n' || s[j] == '\r') { // line breaks after punctuation join it
				j++
			}
			i = j
		}
	}
	return cost
}

// tokWordCost is the cost of a run of ASCII letters, split at camelCase and ALLCAPS boundaries.
func tokWordCost(w string) int {
	cost, start := 0, 0
	for i := 1; i < len(w); i++ {
		up, prevUp := tokIsUpper(w[i]), tokIsUpper(w[i-1])
		if !prevUp && up || prevUp && up && i+1 < len(w) && !tokIsUpper(w[i+1]) {
			cost += tokSegmentCost(w[start:i])
			start = i
		}
	}
	return cost + tokSegmentCost(w[start:])
}

func tokSegmentCost(w string) int {
	allCaps := len(w) >= 2
	for i := 0; i < len(w) && allCaps; i++ {
		allCaps = tokIsUpper(w[i])
	}
	switch {
	case allCaps:
		return max(tokWord, len(w)*tokCapsPerChar)
	case len(w) > tokLongFrom:
		return tokWord + (len(w)-tokLongFrom)*tokLongPerChar
	}
	return tokWord
}
