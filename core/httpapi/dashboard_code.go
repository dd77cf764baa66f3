package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
)

// How the dashboard gets its credential, without the token ever reaching the browser:
//
//  1. `asyncagents dashboard`, which reads the token from the server file, asks the server for a
//     one-time code (POST /v1/dashboard/code, with the token) and opens /?code=<code>. The code is
//     good once, for CodeValidMs: what the browser's command line and history keep opens nothing.
//  2. The page trades it (POST /v1/dashboard/session?code=<code>, from its own Origin) for a
//     credential, which it keeps in sessionStorage: only its own origin (scheme, host and port)
//     reads that, where a cookie of 127.0.0.1 goes to every port. The page sends it as
//     Authorization: Bearer, its event stream included (a fetch stream, not EventSource).
//
// The credential is the code and an HMAC of it keyed by the token: checked without any state,
// worthless without the token, and void once the server restarts with a new one. The codes are
// the state (Codes), held by the machine between requests; the randomness they are made of is
// the host's (Request.Entropy), since the core has none.

// Codes are the dashboard's one-time codes not yet traded, at most codesMax.
type Codes struct {
	pending []pendingCode
}

type pendingCode struct {
	code    string
	expires int64 // Unix ms; the code is good while now < expires
}

const (
	// DashboardCodePath is where a code is asked for, with the token (POST).
	DashboardCodePath = "/v1/dashboard/code"
	// CodeValidMs is how long a code is good for: the time to open a link just printed.
	CodeValidMs = 60_000
	// codesMax bounds the codes waiting to be traded: past it, minting drops the oldest.
	codesMax = 16
	// minEntropy is the least randomness (as text) a host must pass to mint a code.
	minEntropy = 32
	// credentialPrefix starts every dashboard credential, so a token is never taken for one.
	credentialPrefix = "dash."
)

// The two routes' texts.
const (
	apiCodeRefused   = "unauthorized: this dashboard link was used already or has expired (a link opens the dashboard once, within a minute): run asyncagents dashboard again"
	apiCodeMissing   = "missing code: POST /v1/dashboard/session?code=<the code of the link asyncagents dashboard opened>"
	apiTradeOrigin   = "forbidden: a dashboard code is traded by this server's own page (its Origin, http://127.0.0.1:<port> or http://localhost:<port>)"
	apiNoEntropy     = "internal error: the host passed no randomness (entropy) with the request; no code was made"
	apiMintNeedToken = "unauthorized: a dashboard code is given for this server's token only (send Authorization: Bearer <token>, from the server file)"
)

// APICode is POST /v1/dashboard/code's answer.
type APICode struct {
	Code      string `json:"code"`
	ExpiresAt int64  `json:"expiresAt"` // Unix ms
	// URL is the link that opens the dashboard with the code, at the Host the request named.
	URL string `json:"url"`
}

// APISession is POST /v1/dashboard/session's answer: the page sends Credential as its bearer.
type APISession struct {
	Credential string `json:"credential"`
}

// apiServeDashboard checks a request to one of the two routes (route is "code" or "session")
// and marks the answer for Codes.Finish, which holds the codes.
func apiServeDashboard(req Request, route string, q []apiQueryParam, cfg config.APIConfig) Response {
	if route == "session" {
		if !apiOwnOrigin(req) {
			return apiFail(403, apiTradeOrigin)
		}
		code := apiQueryGet(q, "code")
		if code == "" {
			return apiFail(400, apiCodeMissing)
		}
		return Response{Status: 200, Headers: apiJSONHeaders(), trade: code}
	}
	if !apiAuthNone(cfg) {
		// The token itself, not a dashboard credential: a page cannot hand out links.
		v, _ := apiHeader(req.Headers, "authorization")
		scheme, given, _ := strings.Cut(strings.TrimSpace(v), " ")
		if cfg.Token == "" || !strings.EqualFold(scheme, "Bearer") || !apiTokenEqual(strings.TrimSpace(given), cfg.Token) {
			r := apiFail(401, apiMintNeedToken)
			r.Headers["WWW-Authenticate"] = `Bearer realm="asyncagents"`
			return r
		}
	}
	return Response{Status: 200, Headers: apiJSONHeaders(), mint: true}
}

// Finish completes an answer Serve marked for the codes (a mint or a trade), and returns any
// other answer as it is.
func (c *Codes) Finish(r Response, req Request, cfg config.APIConfig, now int64) Response {
	switch {
	case r.mint:
		code, ok := c.Mint(req.Entropy, now)
		if !ok {
			return apiFail(500, apiNoEntropy)
		}
		host, _ := apiHeader(req.Headers, "host") // a loopback name: Serve checked it
		return apiJSON(APICode{Code: code, ExpiresAt: now + CodeValidMs, URL: "http://" + host + "/?code=" + code})
	case r.trade != "":
		if !c.Take(r.trade, now) {
			r := apiFail(401, apiCodeRefused)
			r.Headers["WWW-Authenticate"] = `Bearer realm="asyncagents"`
			return r
		}
		return apiJSON(APISession{Credential: Credential(cfg.Token, r.trade)})
	}
	return r
}

// Mint makes a code from the host's randomness, good until now+CodeValidMs. It fails (false)
// when entropy is too short to be a secret.
func (c *Codes) Mint(entropy string, now int64) (string, bool) {
	if len(entropy) < minEntropy {
		return "", false
	}
	sum := sha256.Sum256([]byte("asyncagents dashboard code\x00" + entropy))
	code := hex.EncodeToString(sum[:16])
	c.dropExpired(now)
	if len(c.pending) >= codesMax {
		c.pending = c.pending[1:]
	}
	c.pending = append(c.pending, pendingCode{code: code, expires: now + CodeValidMs})
	return code, true
}

// Take reports whether code is pending and still good at now, and spends it: a code is taken
// once. Every pending code is compared, in time that does not depend on where they differ.
func (c *Codes) Take(code string, now int64) bool {
	c.dropExpired(now)
	found := -1
	for i, p := range c.pending {
		if subtle.ConstantTimeCompare([]byte(p.code), []byte(code)) == 1 {
			found = i
		}
	}
	if found < 0 {
		return false
	}
	c.pending = append(c.pending[:found], c.pending[found+1:]...)
	return true
}

// Pending is how many codes wait to be traded.
func (c *Codes) Pending() int { return len(c.pending) }

func (c *Codes) dropExpired(now int64) {
	kept := c.pending[:0]
	for _, p := range c.pending {
		if now < p.expires {
			kept = append(kept, p)
		}
	}
	c.pending = kept
}

// Credential is what a code is traded for: the code and its HMAC keyed by the token.
func Credential(token, code string) string {
	return credentialPrefix + code + "." + credentialMAC(token, code)
}

func credentialMAC(token, code string) string {
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "asyncagents dashboard credential\x00%s", code)
	return hex.EncodeToString(m.Sum(nil))
}

// apiCredentialValid reports whether given is a credential Credential made with token.
func apiCredentialValid(token, given string) bool {
	rest, ok := strings.CutPrefix(given, credentialPrefix)
	if !ok || token == "" {
		return false
	}
	code, mac, ok := strings.Cut(rest, ".")
	if !ok || code == "" {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(credentialMAC(token, code)))
}
