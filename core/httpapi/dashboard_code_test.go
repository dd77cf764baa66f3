package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
)

const testEntropy = "0123456789abcdef0123456789abcdef0123456789abcdef"

// The one-time code's rules: made of the host's randomness, good for CodeValidMs, taken once.
func TestDashboardCodes(t *testing.T) {
	const t0 = 1_000_000
	cases := []struct {
		name    string
		entropy string
		takeAt  int64 // ms after minting
		code    func(minted string) string
		takes   int // how many takes succeed
	}{
		{"taken at once", testEntropy, 0, nil, 1},
		{"taken just before it expires", testEntropy, CodeValidMs - 1, nil, 1},
		{"expired", testEntropy, CodeValidMs, nil, 0},
		{"long expired", testEntropy, 10 * CodeValidMs, nil, 0},
		{"another code", testEntropy, 0, func(string) string { return strings.Repeat("0", 32) }, 0},
		{"a prefix of the code", testEntropy, 0, func(c string) string { return c[:31] }, 0},
		{"the code and more", testEntropy, 0, func(c string) string { return c + "0" }, 0},
		{"empty", testEntropy, 0, func(string) string { return "" }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Codes
			code, ok := c.Mint(tc.entropy, t0)
			require.True(t, ok)
			require.Len(t, code, 32)
			require.NotContains(t, code, tc.entropy, "the code is made of the randomness, not a copy of it")
			try := code
			if tc.code != nil {
				try = tc.code(code)
			}
			got := 0
			for range 3 {
				if c.Take(try, t0+tc.takeAt) {
					got++
				}
			}
			require.Equal(t, tc.takes, got, "a code is good once, within its time")
		})
	}
}

func TestDashboardCodesNeedRandomness(t *testing.T) {
	var c Codes
	for _, e := range []string{"", "short", strings.Repeat("a", minEntropy-1)} {
		_, ok := c.Mint(e, 0)
		require.False(t, ok, "entropy %q", e)
	}
	a, _ := c.Mint(testEntropy, 0)
	b, _ := c.Mint(testEntropy+"x", 0)
	require.NotEqual(t, a, b, "other randomness, another code")
}

// Codes wait at most codesMax at once: minting more drops the oldest, and expired ones go first.
func TestDashboardCodesBounded(t *testing.T) {
	var c Codes
	var codes []string
	for i := range codesMax + 3 {
		code, ok := c.Mint(fmt.Sprintf("%s%04d", testEntropy, i), 0)
		require.True(t, ok)
		codes = append(codes, code)
	}
	require.Equal(t, codesMax, c.Pending())
	for i, code := range codes {
		require.Equal(t, i >= 3, c.Take(code, 1), "code %d", i)
	}
	require.Zero(t, c.Pending())
	c.Mint(testEntropy, 0)
	c.Mint(testEntropy+"y", CodeValidMs)
	require.Equal(t, 1, c.Pending(), "the expired code is dropped")
}

// The credential is the code and its MAC keyed by the token: good with that token only.
func TestDashboardCredential(t *testing.T) {
	cred := Credential("tok", "abc")
	require.True(t, apiCredentialValid("tok", cred))
	for _, bad := range []struct{ token, cred string }{
		{"other", cred},
		{"", Credential("", "abc")},
		{"tok", "tok"},
		{"tok", strings.Replace(cred, "abc", "abd", 1)},
		{"tok", cred[:len(cred)-1]},
		{"tok", credentialPrefix + "abc"},
		{"tok", credentialPrefix + "." + credentialMAC("tok", "")},
	} {
		require.False(t, apiCredentialValid(bad.token, bad.cred), "%q with token %q", bad.cred, bad.token)
	}
}

// Through Serve and Finish, as the machine answers: a code from the token, traded once from the
// own page, for a credential that reads the API and cancels, and no cookie anywhere.
func TestDashboardCodeTrade(t *testing.T) {
	cfg := config.APIConfig{Token: "s3cret"}
	var codes Codes
	serve := func(method, path, query string, headers map[string]string) Response {
		h := map[string]string{"host": "127.0.0.1:5165"}
		for k, v := range headers {
			h[k] = v
		}
		req := Request{Method: method, Port: 5165, Path: path, Query: query, Headers: h, Entropy: testEntropy}
		r := codes.Finish(Serve(req, nil, cfg, 1000), req, cfg, 1000)
		require.NotContains(t, r.Headers, "Set-Cookie")
		return r
	}
	own := map[string]string{"origin": "http://127.0.0.1:5165"}
	mint := serve("POST", "/v1/dashboard/code", "", map[string]string{"authorization": "Bearer " + cfg.Token})
	require.Equal(t, 200, mint.Status, mint.Body)
	require.Contains(t, mint.Body, fmt.Sprintf(`"expiresAt":%d`, 1000+CodeValidMs))
	code := mint.Body[strings.Index(mint.Body, `"code":"`)+8:][:32]
	require.Contains(t, mint.Body, `"url":"http://127.0.0.1:5165/?code=`+code+`"`)

	refused := serve("POST", "/v1/dashboard/code", "", map[string]string{"authorization": "Bearer " + Credential(cfg.Token, code)})
	require.Equal(t, 401, refused.Status, "a credential cannot ask for codes")

	trade := serve("POST", "/v1/dashboard/session", "code="+code, own)
	require.Equal(t, 200, trade.Status, trade.Body)
	require.Equal(t, `{"credential":"`+Credential(cfg.Token, code)+`"}`, trade.Body)
	again := serve("POST", "/v1/dashboard/session", "code="+code, own)
	require.Equal(t, 401, again.Status)

	read := serve("GET", "/v1/stats", "", map[string]string{"authorization": "Bearer " + Credential(cfg.Token, code)})
	require.Equal(t, 200, read.Status, read.Body)

	require.Equal(t, 500, ServeTasks(Request{Method: "POST", Port: 5165, Path: "/v1/dashboard/code",
		Headers: map[string]string{"host": "127.0.0.1:5165", "authorization": "Bearer " + cfg.Token}}, nil, cfg, 0).Status,
		"without the machine's codes there is no code")
}
