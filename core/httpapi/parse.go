package httpapi

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reading a request: paths, query strings, percent-escapes and counts, and client input echoed
// in an error message.

// apiEcho quotes client input for an error message, cut to apiMaxEcho bytes on a rune boundary.
func apiEcho(s string) string {
	if len(s) > apiMaxEcho {
		cut := apiMaxEcho
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

func apiJoinStatuses() string {
	names := make([]string, len(apiStatusNames))
	for i, s := range apiStatusNames {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// --- request parsing ---

// apiHeader finds a header by its lower-case name, tolerating a host that kept the original case.
func apiHeader(h map[string]string, name string) (string, bool) {
	if v, ok := h[name]; ok {
		return v, true
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// apiSplitPath splits "/v1/tasks/x" into unescaped segments ["v1" "tasks" "x"]. A trailing slash
// gives a last empty segment, which no route accepts.
func apiSplitPath(p string) ([]string, bool) {
	if !strings.HasPrefix(p, "/") {
		return nil, true
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if strings.IndexByte(s, '%') < 0 {
			continue
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		segs[i] = u
	}
	return segs, true
}

type apiQueryParam struct{ key, value string }

// apiParseQuery is the query's parameters as net/url reads them ("+" is a space), by key, each
// key's values in their order. A bad percent-escape, or a ";" (which net/http refuses as a
// separator too), makes it fail.
func apiParseQuery(raw string) ([]apiQueryParam, bool) {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, false
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []apiQueryParam
	for _, k := range keys {
		for _, v := range values[k] {
			out = append(out, apiQueryParam{k, v})
		}
	}
	return out, true
}

// apiQueryGet returns the first value of key; a parameter given empty counts as not given.
func apiQueryGet(q []apiQueryParam, key string) string {
	for _, p := range q {
		if p.key == key {
			return p.value
		}
	}
	return ""
}

// apiParseCount parses a non-negative decimal integer of at most 9 digits.
func apiParseCount(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func apiIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// apiContainsFoldASCII reports whether s contains the lower-case ASCII needle, ignoring ASCII case,
// without allocating.
func apiContainsFoldASCII(s, needle string) bool {
	n := len(needle)
	if n == 0 {
		return true
	}
	first := needle[0]
	for i := 0; i+n <= len(s); i++ {
		if apiLowerASCII(s[i]) != first {
			continue
		}
		j := 1
		for j < n && apiLowerASCII(s[i+j]) == needle[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func apiLowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
