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
# beside itself (or wherever BOOTBENCH_PREBUILT points). The twins' kernels
# and the big-endian MIPS openssl are not in it: a release builds them on
# first use where Debian's packages for that are installed, and otherwise
# says in one line which to install. RELEASE_DIR is where the tarball goes;
# RELEASE_ARCH limits the set to some architectures (default: all).
RELEASE_DIR  ?= dist
RELEASE_ARCH ?=
DIST         := $(RELEASE_DIR)/bootbench
release: build
	rm -rf $(DIST) && mkdir -p $(DIST)
	cp $(BIN) $(DIST)/bootbench
	$(BIN) image prebuild $(if $(RELEASE_ARCH),--arch $(RELEASE_ARCH)) -o $(DIST)/bootbench-images
	tar -C $(RELEASE_DIR) -czf $(RELEASE_DIR)/bootbench-linux-$$($(GO) env GOARCH).tar.gz bootbench

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
# cmd/bootbench's boots, the longest package, instead of after them.
# -parallel 4: cmd/bootbench's end-to-end tests (the only tests that call
# t.Parallel) four at a time. Each waits much of its time (for a firmware's
# prompt, a DHCP exchange, a power switch), and two at a time left the cores
# idle for it: its sixteen slowest took 5 min 10 s two at a time, 3 min 47 s
# four at a time, both cores busy. A virtual board's figures are counted
# on QEMU's instruction clock, whatever else runs; what runs on the host's
# clock (iperf3's rates, time limits, sleeps) shares the two cores and is
# checked with room for that. A shared
# cache entry is built once (a lock beside each, APT's lists included), and
# no test takes another package's namespaces or processes for leftovers.
# -timeout 80m: cmd/bootbench's tests took 47 min on a fresh machine beside
# the other packages, waiting for the kernels and openssl 'boards prepare'
# builds (make test took 60 min there in all).
# ./bench's TestScripts runs every bench/*.sh (netboot-vs-dnsmasq.sh,
# realbench-vs-virtual.sh, speed-vs-openssl.sh, store-sqlite-vs-postgres.sh,
# store-scale.sh, tftp-vs-dnsmasq.sh, twin-boot.sh) at its smallest count, and
# fails for one it does not know.
# -artifacts keeps what a test leaves to be looked at (the energy test's HTML
# report, the bench page's screenshots) under _artifacts/.
# The fuzz targets run first, so that the last lines are scripts/testsummary's:
# what go test prints, then the ten slowest tests.
#
# The twins' kernels (bootbench's own, built from Debian's Linux source) and
# the big-endian MIPS openssl are built first thing, by 'boards prepare',
# beside vet, the fuzz targets and the tests that need none of them: some
# twenty minutes of both cores on a fresh machine, which no test then waits
# for from its start. A test that needs one waits for that build (a lock
# beside each cache entry) instead of building it again. The prepare's own
# lines, each build's time among them, go to $(PREPARE_LOG); a failed
# prepare fails make test.
TWINS       := qemu-x86_64 qemu-rb450g qemu-wrt54g
PREPARE_LOG := bin/prepare.log
test: deps fmt-check build
	@$(BIN) boards prepare --bench openssl $(TWINS) >$(PREPARE_LOG) 2>&1 & prep=$$!; \
	$(MAKE) --no-print-directory vet fuzz && \
	BOOTBENCH_E2E=1 $(GO) run ./scripts/testsummary -top 10 -- -count=1 -p 2 -parallel 4 -timeout 80m -artifacts ./...; rc=$$?; \
	if ! wait $$prep; then echo "make test: boards prepare $(TWINS) failed ($(PREPARE_LOG)):"; tail -n 20 $(PREPARE_LOG); rc=1; fi; \
	exit $$rc

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
