# bootbench — see README.md.
#   make demo   install what is missing, build, run the benchmark on the default virtual board
#   make test   install what is missing, fuzz, run every test, the end-to-end boots included
#   make fuzz   run each fuzz target for FUZZTIME (default 20s)
GO      ?= go
BIN     := bin/bootbench
BOARD   ?= qemu-x86_64

.PHONY: all deps deps-demo build release demo test fuzz vet fmt-check clean

all: build

# What 'make test' needs; 'make demo' installs only what it runs.
deps:
	scripts/deps.sh test

deps-demo:
	scripts/deps.sh demo

# A static binary (no cgo: the SQLite driver is pure Go), which runs on any
# Linux of its architecture.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/bootbench

# A release: the static binary with the prebuilt image set (u-root's init and
# benchinit for every architecture) beside it, so 'image build' and 'run'
# need neither the source tree nor Go: the binary finds bootbench-images
# beside itself (or wherever BOOTBENCH_PREBUILT points).
DIST    := dist/bootbench
release: build
	rm -rf $(DIST) && mkdir -p $(DIST)
	cp $(BIN) $(DIST)/bootbench
	$(BIN) image prebuild -o $(DIST)/bootbench-images
	tar -C dist -czf dist/bootbench-linux-$$($(GO) env GOARCH).tar.gz bootbench

demo: deps-demo build
	$(BIN) run --board $(BOARD)
	@echo
	@echo "Export what is stored:  $(BIN) results export --format json"

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The end-to-end tests boot QEMU boards; BOOTBENCH_E2E=1 makes a missing
# prerequisite a failure instead of a skip. -p 2: two packages at a time, so
# the other packages' tests (./bench's scripts most of all) run beside
# cmd/bootbench's boots, the longest package, instead of after them. A
# virtual board's figures are counted on QEMU's instruction clock, whatever
# else runs; what runs on the host's clock (iperf3's rates, time limits,
# sleeps) shares the two cores and is checked with room for that. A shared
# cache entry is built once (a lock beside each, APT's lists included), and
# no test takes another package's namespaces or processes for leftovers.
# -timeout 80m: cmd/bootbench's boots take some 50 min on a fresh machine
# beside the other packages (the MIPS and x86-64 kernels and openssl built on the way).
# ./bench's TestScripts runs every bench/*.sh (netboot-vs-dnsmasq.sh,
# realbench-vs-virtual.sh, speed-vs-openssl.sh, store-sqlite-vs-postgres.sh,
# store-scale.sh, tftp-vs-dnsmasq.sh, twin-boot.sh) at its smallest count, and
# fails for one it does not know.
# -artifacts keeps what a test leaves to be looked at (the energy test's HTML
# report, the bench page's screenshots) under _artifacts/.
# The fuzz targets run first, so that the last lines are scripts/testsummary's:
# what go test prints, then the ten slowest tests.
test: deps fmt-check vet
	@$(MAKE) --no-print-directory fuzz
	BOOTBENCH_E2E=1 $(GO) run ./scripts/testsummary -top 10 -- -count=1 -p 2 -timeout 80m -artifacts ./...

# The servers' input from the network and the board's frames from the
# console, fuzzed beyond their seed corpora (testdata/fuzz/ beside each
# target). An input that breaks a target is written there, and go test
# replays it from then on. go test -fuzz takes one target at a time.
# A count, not a duration: with a duration Go 1.26's fuzz coordinator can
# report its own deadline as the target's failure ("context deadline
# exceeded", no input written: golang/go#75804, fixed in Go 1.27).
# 100000 runs take each target some 10-20 s on two cores.
FUZZTIME ?= 100000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDHCPRequest$$' -fuzztime $(FUZZTIME) ./netboot
	$(GO) test -run '^$$' -fuzz '^FuzzTFTPName$$' -fuzztime $(FUZZTIME) ./netboot
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./contract/frame

clean:
	rm -rf bin dist
