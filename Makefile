# chainlens: `make run` starts the whole system offline; `make test` runs every test.
GO       ?= go
BIN      := bin/chainlens
DEV_BIN  := bin/chainlens-dev
CONFIG   ?= config/local.yaml
PKGS     ?= ./...
TESTFLAGS ?=

.PHONY: all build run test test-short lint vet fmt bench db db-stop clean

all: build

## build: the service (bin/chainlens) and the local chains it is developed against (bin/chainlens-dev)
build:
	$(GO) build -o $(BIN) ./cmd/chainlens
	$(GO) build -o $(DEV_BIN) ./cmd/chainlens-dev

## run: build, ensure Postgres, migrate, create a dev key and start every role with $(CONFIG)
run: build
	CONFIG=$(CONFIG) scripts/run-local.sh

## test: every test (unit, Postgres, in-process chain, end to end); each test gets its own database.
## scripts/sdk.sh builds and unit-tests the JavaScript SDK first (its browser test loads the bundle);
## scripts/docs-ui.sh --check and scripts/console-ui.sh --check install the /docs and /console assets'
## npm packages and check the embedded copies.
test: lint
	scripts/sdk.sh
	scripts/docs-ui.sh --check
	scripts/console-ui.sh --check
	@url=$$(scripts/db.sh ensure postgres) && \
	  CHAINLENS_TEST_DATABASE_URL="$$url" $(GO) test -count=1 -p 2 -timeout 25m $(TESTFLAGS) $(PKGS)

## test-short: the tests that need no Postgres (every test database skips under -short)
test-short:
	$(GO) test -short -count=1 $(TESTFLAGS) $(PKGS)

## lint: go vet, gofmt and staticcheck (staticcheck.conf; pinned as a tool in go.mod);
## the layer import rules are a test (internal/layers)
lint: vet
	$(GO) tool staticcheck ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

fmt:
	gofmt -w $$(git ls-files '*.go')

## bench: benchmarks (not part of `make test`); results go to docs/PERFORMANCE.md
bench:
	@url=$$(scripts/db.sh ensure postgres) && \
	  CHAINLENS_TEST_DATABASE_URL="$$url" $(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## db: print the URL of a running Postgres (starting a private one if needed)
db:
	@scripts/db.sh ensure chainlens

## db-stop: stop the private Postgres cluster under .data/pg
db-stop:
	scripts/db.sh stop

clean:
	rm -rf bin
