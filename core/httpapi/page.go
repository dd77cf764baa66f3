package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
)

// GET / answers with the web dashboard: one self-contained page (host/dashboard), which the host
// holds and writes as the body of an answer that names it (Response.Asset). The page holds
// no task data: it reads the API, with the cookie this route sets.
//
// The token reaches the page once, in the address the user opens (/?token=…): this route trades
// it for an HttpOnly, SameSite=Strict cookie and redirects to /, so the token leaves the address
// bar (and the history, and any screen share). The cookie holds a hash of the token, not the
// token: cookies are kept per host, not per port, so every server on 127.0.0.1 receives it.

// DashboardAsset is the asset name of the dashboard's page.
const DashboardAsset = "dashboard"

// apiPageCSP allows the page's own inline script and style (by hash, dashboard_csp.go) and
// requests to its own origin, and nothing else: no other script, no frame, no form, no
// request that leaves the server.
var apiPageCSP = "default-src 'none'; script-src '" + dashboardScriptHash + "'; style-src '" + dashboardStyleHash +
	"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func apiServePage(req Request, q []apiQueryParam, cfg config.APIConfig) Response {
	h := map[string]string{
		"Cache-Control":          "no-store",
		"Referrer-Policy":        "no-referrer",
		"X-Content-Type-Options": "nosniff",
	}
	if _, hasToken := apiQueryHas(q, "token"); hasToken {
		// The token leaves the address bar in every case; the cookie is set only for this
		// server's token (a wrong one leaves the page asking for the right link).
		h["Location"] = "/"
		if given := apiQueryGet(q, "token"); cfg.Token != "" && apiTokenEqual(given, cfg.Token) {
			h["Set-Cookie"] = apiCookieName(req.Port) + "=" + apiCookieValue(cfg.Token) + "; Path=/; HttpOnly; SameSite=Strict"
		}
		return Response{Status: 303, Headers: h}
	}
	h["Content-Type"] = "text/html; charset=utf-8"
	h["Content-Security-Policy"] = apiPageCSP
	h["X-Frame-Options"] = "DENY"
	return Response{Status: 200, Headers: h, Asset: DashboardAsset}
}

// apiCookieName names the dashboard's cookie by the server's port: two servers (two projects)
// on 127.0.0.1 share one cookie jar, and each keeps its own.
func apiCookieName(port int) string {
	if port <= 0 {
		return "asyncagents"
	}
	return "asyncagents_" + strconv.Itoa(port)
}

// apiCookieValue is what the cookie holds for token: a hash, from which the token cannot be had.
func apiCookieValue(token string) string {
	sum := sha256.Sum256([]byte("asyncagents dashboard cookie\x00" + token))
	return hex.EncodeToString(sum[:])
}

// apiCookie returns the value of the cookie name in the Cookie header, or "".
func apiCookie(headers map[string]string, name string) string {
	v, _ := apiHeader(headers, "cookie")
	for v != "" {
		var part string
		part, v, _ = strings.Cut(v, ";")
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		if k == name {
			return val
		}
	}
	return ""
}

// apiQueryHas returns the first value of key and whether key was given at all.
func apiQueryHas(q []apiQueryParam, key string) (string, bool) {
	for _, p := range q {
		if p.key == key {
			return p.value, true
		}
	}
	return "", false
}
