package httpapi

import (
	"crypto/subtle"
	"strconv"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
)

// Who may read and change: the token (or the dashboard's credential, dashboard_code.go) and the
// server's own Origin.

// apiAuthorize checks the token: the bearer token, the dashboard's credential (Credential) as
// the bearer, and for the event stream ?token= too (the token only), for clients that cannot
// send headers. It answers the 401 when the request is refused. With auth "none" every request
// passes (Serve has already refused foreign Origins).
func apiAuthorize(req Request, q []apiQueryParam, queryToken bool, cfg config.APIConfig) (Response, bool) {
	if apiAuthNone(cfg) {
		return Response{}, false
	}
	deny := func(msg string) (Response, bool) {
		r := apiFail(401, msg)
		r.Headers["WWW-Authenticate"] = `Bearer realm="asyncagents"`
		return r, true
	}
	if cfg.Token == "" {
		// Fail closed: a server that requires a token but has none accepts no one.
		return deny("unauthorized: the server has no API token configured")
	}
	given := ""
	if v, _ := apiHeader(req.Headers, "authorization"); strings.TrimSpace(v) != "" {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return deny("unauthorized: the Authorization header must be \"Bearer <token>\"")
		}
		given = strings.TrimSpace(rest)
		if strings.HasPrefix(given, credentialPrefix) {
			// The page's own, from its own origin (or a client with none): a page of another
			// origin never holds it, and is not helped if it did.
			if _, hasOrigin := apiHeader(req.Headers, "origin"); hasOrigin && !apiOwnOrigin(req) {
				return deny("unauthorized: the dashboard's credential counts from its own page only")
			}
			if apiCredentialValid(cfg.Token, given) {
				return Response{}, false
			}
			return deny("unauthorized: the dashboard's credential is not this server's (it restarted with a new token): open the dashboard again with asyncagents dashboard")
		}
	}
	if given == "" && queryToken {
		given = apiQueryGet(q, "token") // the token only: a credential goes in the header
	}
	if given != "" {
		if !apiTokenEqual(given, cfg.Token) {
			return deny("unauthorized: invalid token")
		}
		return Response{}, false
	}
	if queryToken {
		return deny("unauthorized: missing token (send Authorization: Bearer <token>, or ?token=<token> on /v1/events)")
	}
	return deny("unauthorized: missing token (send Authorization: Bearer <token>)")
}

// apiAuthNone reports whether the token check is off (ASYNCAGENTS_API_AUTH=none).
func apiAuthNone(cfg config.APIConfig) bool { return cfg.NoToken() }

// apiOwnOrigin reports whether the request comes from the server's own pages: its Origin is
// http:// and the Host it was sent to, and that Host is 127.0.0.1 or localhost with the port the
// server listens on. A browser sets both headers itself, so a page of any other origin (another
// port of 127.0.0.1 included) cannot pass.
func apiOwnOrigin(req Request) bool {
	origin, ok := apiHeader(req.Headers, "origin")
	host, _ := apiHeader(req.Headers, "host")
	if !ok || req.Port <= 0 {
		return false
	}
	name, port, hasPort := strings.Cut(host, ":")
	if name != "127.0.0.1" && !strings.EqualFold(name, "localhost") {
		return false
	}
	if hasPort && port != strconv.Itoa(req.Port) || !hasPort && req.Port != 80 {
		return false
	}
	return strings.EqualFold(origin, "http://"+host)
}

// apiTokenEqual compares in time that does not depend on where the tokens differ.
func apiTokenEqual(given, want string) bool {
	return subtle.ConstantTimeCompare([]byte(given), []byte(want)) == 1
}
