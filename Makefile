# devctl: everyone's entry points. `make run` builds and probes this machine;
# `make test` is what CI runs.
GO      ?= go
BIN     := bin/devctl
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/devctl/devctl/internal/cmd/root.Version=$(VERSION)
CROSS   := linux/arm64 darwin/arm64 darwin/amd64 windows/amd64
# go-nvml's header marks old NVML calls deprecated; its cgo wrappers for them
# would otherwise fill every build log with warnings about code we never call.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: build run test lint fmt vet tidy-check cross unit fuzz bench bench-probe bench-startup bench-recommend bench-doctor bench-run bench-devmem bench-serve bench-accuracy schemas docs fixtures clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/devctl

run: build
	./$(BIN) probe

## test: formatting, vet, tidy, race-enabled tests and the cgo-free cross-builds.
test: lint tidy-check unit cross

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@empty=$$(find testdata cmd/devctl/testdata -type d -empty 2>/dev/null); \
	if [ -n "$$empty" ]; then echo "git does not keep empty fixture directories; put a real file in each:"; echo "$$empty"; exit 1; fi

vet:
	$(GO) vet ./...

tidy-check:
	@cp go.mod /tmp/devctl-go.mod.bak; cp go.sum /tmp/devctl-go.sum.bak; \
	$(GO) mod tidy; \
	if ! diff -q go.mod /tmp/devctl-go.mod.bak >/dev/null || ! diff -q go.sum /tmp/devctl-go.sum.bak >/dev/null; then \
	  echo "go mod tidy changed go.mod/go.sum; commit the tidy result"; \
	  cp /tmp/devctl-go.mod.bak go.mod; cp /tmp/devctl-go.sum.bak go.sum; exit 1; fi

unit:
	$(GO) test -race -count=1 ./...

cross:
	@for p in $(CROSS); do \
	  echo "cross-build $$p (CGO_ENABLED=0)"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/... || exit 1; \
	done

fmt:
	gofmt -w $$(git ls-files '*.go')

## fuzz: run every fuzz target briefly (FUZZTIME=10s by default).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: bench-probe bench-recommend bench-doctor bench-run bench-devmem

bench-probe: build
	scripts/bench-probe.sh

bench-startup: build
	scripts/bench-startup.sh

bench-recommend: build
	scripts/bench-recommend.sh

bench-doctor: build
	scripts/bench-doctor.sh

bench-run: build
	scripts/bench-run.sh

bench-devmem: build
	scripts/bench-devmem.sh

## bench-serve: load devctl serve with wrk (installed from Debian if missing), loopback only.
bench-serve: build
	scripts/bench-serve.sh

## docs: the command reference from the cobra tree: docs/commands/*.md (committed) and man/man1/*.1 (MANPATH=man).
docs:
	$(GO) run ./tools/gendocs -md docs/commands -man man/man1

## schemas: regenerate schemas/*.schema.json and the probe report's JSON encoder from the Go types (review the diff: docs/schemas.md).
schemas:
	$(GO) test ./schemas -run TestSchemasUpToDate -update
	$(GO) test ./internal/probe -run TestReportEncoderUpToDate -update

## fixtures: regenerate testdata/doctor from internal/doctor/fixturegen (review the diff).
fixtures:
	$(GO) run ./internal/doctor/fixturegen/cmd/genfixtures -testdata testdata

clean:
	rm -rf bin man dist
