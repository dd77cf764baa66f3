package httpapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PortInHeaders puts port where the conformance/http cases write {port} in a request's headers
// (Host, Origin, the cookie's name): the server's own port, which over real HTTP is the one the
// test server got, and natively the case's own. It returns a copy of req with Port set. Every
// runner puts the same port for {port} in the case's expect too.
func PortInHeaders(req Request, port int) Request {
	h := make(map[string]string, len(req.Headers))
	for k, v := range req.Headers {
		h[k] = strings.ReplaceAll(v, "{port}", strconv.Itoa(port))
	}
	req.Headers, req.Port = h, port
	return req
}

// Saved are values a conformance/http case took from its answer's body ("save": ["code"] takes
// the body's field code), for the cases after it, which write {code} where it goes: a value
// the host's randomness made (a dashboard code, its credential) is known only once answered.
type Saved map[string]string

// Take saves the string fields names of body, a JSON object; a field missing is an error.
func (s Saved) Take(names []string, body []byte) error {
	if len(names) == 0 {
		return nil
	}
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		return fmt.Errorf("save: the body is not a JSON object: %s", body)
	}
	for _, n := range names {
		v, ok := fields[n].(string)
		if !ok || v == "" {
			return fmt.Errorf("save: the body has no string field %q: %s", n, body)
		}
		s[n] = v
	}
	return nil
}

// Into puts the saved values where req writes {name}: its path, its query and its headers.
func (s Saved) Into(req Request) Request {
	put := func(v string) string {
		for k, val := range s {
			v = strings.ReplaceAll(v, "{"+k+"}", val)
		}
		return v
	}
	h := make(map[string]string, len(req.Headers))
	for k, v := range req.Headers {
		h[k] = put(v)
	}
	req.Headers, req.Path, req.Query = h, put(req.Path), put(req.Query)
	return req
}
