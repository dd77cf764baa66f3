package config

import "strings"

// The values of APIConfig.Auth: any value but APIAuthNone (in any case, spaces around it
// ignored) means APIAuthToken. A host passes $ASYNCAGENTS_API_AUTH as it is.
const (
	APIAuthToken = "token"
	APIAuthNone  = "none"
)

// NoToken reports whether c turns the token check off (Auth is APIAuthNone).
func (c APIConfig) NoToken() bool {
	return strings.EqualFold(strings.TrimSpace(c.Auth), APIAuthNone)
}
