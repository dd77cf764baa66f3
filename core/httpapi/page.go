package httpapi

// GET / answers with the web dashboard: one self-contained page (host/dashboard), which the host
// holds and writes as the body of an answer that names it (Response.Asset). The page holds
// no task data: it reads the API with the credential it traded its link's one-time code for
// (dashboard_code.go). No cookie: a cookie of 127.0.0.1 goes to every server on it, whatever
// the port.

// DashboardAsset is the asset name of the dashboard's page.
const DashboardAsset = "dashboard"

// apiPageCSP allows the page's own inline script and style (by hash, dashboard_csp.go) and
// requests to its own origin, and nothing else: no other script, no frame, no form, no
// request that leaves the server.
var apiPageCSP = "default-src 'none'; script-src '" + dashboardScriptHash + "'; style-src '" + dashboardStyleHash +
	"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func apiServePage(q []apiQueryParam) Response {
	h := map[string]string{
		"Cache-Control":          "no-store",
		"Referrer-Policy":        "no-referrer",
		"X-Content-Type-Options": "nosniff",
	}
	if _, hasToken := apiQueryHas(q, "token"); hasToken {
		// A link of an older version, with the token in it: the token leaves the address bar,
		// and opens nothing (the page asks for a link with a code).
		h["Location"] = "/"
		return Response{Status: 303, Headers: h}
	}
	h["Content-Type"] = "text/html; charset=utf-8"
	h["Content-Security-Policy"] = apiPageCSP
	h["X-Frame-Options"] = "DENY"
	return Response{Status: 200, Headers: h, Asset: DashboardAsset}
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
