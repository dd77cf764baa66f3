# asyncagents: `make demo` runs the main job, `make test` runs every test. Both install what they
# need (npm packages, Go modules) first.

SHELL := /bin/bash
BUN := node_modules/.bin/bun
GO_WASM := GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w"

.PHONY: all deps build generate dashboard test test-go test-bun demo bench pack clean

all: build

# `npm install` with the committed lock file, not `npm ci`: the registry reachable here lacks some
# other platforms' optional packages of opencode-ai, which makes `npm ci` refuse the lock file.
# The versions installed are still the lock file's.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

deps: node_modules/.installed
	go mod download
	cd deploy/kubernetes && go mod download

# The web dashboard (host/dashboard): one self-contained page, bundled from src/ by esbuild, and
# the hashes of its inline script and style for the core's Content-Security-Policy. Both are
# committed, since go:embed cannot reach dist/ (host/dashboard/page_test.go fails when they are
# stale); this rebuilds them when the source changes, the bridge files the page imports included.
host/dashboard/dashboard.html core/httpapi/dashboard_csp.go &: $(shell find host/dashboard/src -type f) bridge/abi_types.gen.ts bridge/sse.ts host/dashboard/build.mjs node_modules/.installed
	node host/dashboard/build.mjs

dashboard: host/dashboard/dashboard.html

dist/dashboard.html: host/dashboard/dashboard.html
	@mkdir -p dist
	cp $< $@

dist/asyncagents.wasm: $(shell find core wasm -name '*.go') core/httpapi/dashboard_csp.go go.mod
	@mkdir -p dist
	$(GO_WASM) -o $@ ./wasm

# The module the hosts' tests make trap on purpose (wasm/testtraps.go). Not in the package: the
# shipped module has no way to trap on request.
dist/test/asyncagents.wasm: $(shell find core wasm -name '*.go') go.mod
	@mkdir -p dist/test
	$(GO_WASM) -tags testtraps -o $@ ./wasm

dist/manifest.json: $(shell find core internal/cmd/manifest -name '*.go')
	@mkdir -p dist
	go run ./internal/cmd/manifest > $@

dist/asyncagents.js: dist/manifest.json $(shell find plugin-js bridge -name '*.ts' -not -name '*.test.ts') node_modules/.installed
	$(BUN) build plugin-js/index.ts --outfile $@ --target bun --minify

# The Worker the plugin runs its core and status API in (plugin-js/worker.ts).
dist/asyncagents-worker.js: $(shell find plugin-js bridge -name '*.ts' -not -name '*.test.ts') node_modules/.installed
	$(BUN) build plugin-js/worker.ts --outfile $@ --target bun --minify

# The terminal UI module (plugin-js/tui, package.json exports["./tui"]): a bundle of its own, since
# OpenCode takes a module as either the server part or the TUI part. It imports OpenCode's own
# Solid and OpenTUI by the names OpenCode registers them under (RATIONALE.md says why).
dist/asyncagents-tui.js: $(shell find plugin-js/tui bridge -name '*.ts' -not -name '*.test.ts') node_modules/.installed
	$(BUN) build plugin-js/tui/index.ts --outfile $@ --target bun --minify --external 'opentui:runtime-module:*'

# The npm package's CLI (package.json "bin", plugin-js/cli/): the Go CLI's commands under Node, on the
# package's own .wasm.
dist/asyncagents-cli.js: $(shell find plugin-js bridge -name '*.ts' -not -name '*.test.ts') node_modules/.installed
	$(BUN) build plugin-js/cli/main.ts --outfile $@ --target node --minify --banner '#!/usr/bin/env node'

dist/asyncagents: $(shell find core host -name '*.go') core/httpapi/dashboard_csp.go host/dashboard/dashboard.html go.mod
	go build -o $@ ./host/cmd/asyncagents

# The config file's JSON Schema, shipped in the package for editors. `make generate` writes it
# from the core's defaults; core/config/schema_test.go keeps it in step with the core's checks.
dist/asyncagents.schema.json: plugin-js/asyncagents.schema.json
	@mkdir -p dist
	cp $< $@

# Writes what is generated from the core's Go source: the ABI's TypeScript types and shared
# constants (bridge/abi_types.gen.ts), the config file's JSON Schema and the README's option table.
# A Go test (internal/cmd/generate) fails while a committed copy is stale.
generate:
	go run ./internal/cmd/generate

build: deps dist/asyncagents.wasm dist/test/asyncagents.wasm dist/manifest.json dist/asyncagents.js dist/asyncagents-worker.js dist/asyncagents-tui.js dist/asyncagents-cli.js dist/asyncagents dist/asyncagents.schema.json dist/dashboard.html

test: build test-bun test-go

# The bun tests run twice: on the pinned bun, and on the Bun embedded in OpenCode, which is the
# one that runs the plugin for users. Each test is bounded at 20 s: the Worker tests start a Worker
# and compile the core, which bun's 5 s default does not always allow on a loaded machine.
test-bun: build
	node_modules/.bin/tsc -p .
	node_modules/.bin/tsc -p host/dashboard
	$(BUN) test --timeout 20000 bridge/ plugin-js/ host/dashboard/
	BUN_BE_BUN=1 node_modules/.bin/opencode test --timeout 20000 bridge/ plugin-js/

# libfaketime, Debian's package at a pinned version, unpacked here: the e2e tests give a worker a
# clock of its own with it (testharness/ocserve/faketime.go). Package lists are fetched only when
# the machine has none that name it.
FAKETIME_DEB := libfaketime=0.9.10-2.1
.cache/faketime/.installed:
	mkdir -p .cache/faketime
	cd .cache/faketime && { apt-get download $(FAKETIME_DEB) || { apt-get update -qq && apt-get download $(FAKETIME_DEB); }; } \
		&& dpkg -x libfaketime_*.deb . && rm -f libfaketime_*.deb
	@touch $@

# deploy/kubernetes is a module of its own (the Kubernetes API types stay out of the plugin's).
# The bound is the e2e package's, a net for a hang: it takes 25 to 50 minutes on a busy 2-core machine.
test-go: build .cache/faketime/.installed
	cd deploy/kubernetes && go test -count=1 ./...
	go test -count=1 -timeout 90m ./...

demo: build
	@set -o pipefail; go test -count=1 -v -tags demo -run TestDemo ./testharness/demo | grep -v -E '^(ok |PASS$$|=== RUN|--- PASS|\s+lifecycle\.go:[0-9]+: ocserve:)'

bench: build
	go test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 70m ./testharness/bench

# The package's prepack (`make build`, for a bare `npm pack` or `npm publish`) has already run here.
pack: build
	npm pack --ignore-scripts

clean:
	rm -rf dist *.tgz
