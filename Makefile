# sandbox: see README.md. Every target works on a fresh clone: `make test`
# installs the pinned npm peers it needs first.

GO       ?= go
BIN      := bin/sandbox
PKGS     := ./...
# Integration tests fail (rather than skip) when a pinned npm peer is missing.
export SANDBOX_REQUIRE_PEERS := 1

.PHONY: all build test test-short bench lint fmt vet demo peers fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/sandbox

# peers installs the real MCP servers/clients, the conformance suite, tsc and
# deno from the npm registry, exactly as pinned in peers/package-lock.json.
peers: peers/node_modules/.installed
peers/node_modules/.installed: peers/package.json peers/package-lock.json
	cd peers && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test: peers
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)

# test-short skips the slow integration tests (no npm peers needed).
test-short:
	SANDBOX_REQUIRE_PEERS= $(GO) test -short -count=1 $(PKGS)

bench: peers build
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 30m $(PKGS)

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# demo runs an example snippet end to end, as the README's first command.
demo: build
	./$(BIN) run examples/hello.ts

fuzz:
	@echo "Fuzz targets (run one at a time, e.g. go test -fuzz FuzzX ./pkg):"
	@grep -rhoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' . | sed 's/func //'

clean:
	rm -rf bin
