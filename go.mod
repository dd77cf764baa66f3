module github.com/asyncagents/asyncagents

go 1.25.0

require (
	github.com/goccy/go-json v0.12.0
	github.com/stretchr/testify v1.12.1
	github.com/tetratelabs/wazero v1.12.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
