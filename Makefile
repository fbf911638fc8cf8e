# Sensorium — `make demo` and `make test` on a fresh Debian machine.
#
# Both install what is missing first (as root through apt-get; otherwise they
# print the exact command to run), then build with SwiftPM.

SWIFT        ?= swift
APT_PACKAGES := liblua5.4-dev pkg-config libedit-dev zlib1g-dev libsqlite3-dev lua5.4
DEMO         ?= protocols/sleep_light
BIN_RELEASE  := .build/release/sensorium

.PHONY: all deps build release demo test golden bench clean

all: build

## deps: install the system libraries the package links (Lua 5.4, libedit) and pkg-config,
## and stock `lua5.4` (compared against by `sensorium bench lua` and the Lua tests)
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing system packages:$$missing"; \
	    echo "run: sudo apt-get update && sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product sensorium

## demo: build and run the flagship protocol on the simulator
demo: release
	$(BIN_RELEASE) run $(DEMO)

## test: every unit test, then the golden protocols
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	.build/debug/sensorium test protocols/

bench: release
	$(BIN_RELEASE) bench lua

clean:
	rm -rf .build
