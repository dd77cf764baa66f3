package httpapi

import (
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
