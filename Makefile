# Sensorium — `make demo` and `make test` on a fresh Debian machine.
#
# Both install what is missing first (as root through apt-get; otherwise they
# print the exact command to run), then build with SwiftPM.

SWIFT        ?= swift
APT_PACKAGES := liblua5.4-dev pkg-config libedit-dev zlib1g-dev libisal-dev libzstd-dev libsqlite3-dev lua5.4
# zstd and python3: the export-fixture test reads the fixtures on its own (scripts/export-daily-figures.py).
APT_PACKAGES += zstd python3
# Headless Chromium and a font: the browser test renders the HTML run report to PNG.
APT_PACKAGES += chromium fonts-dejavu-core
SLURM_PACKAGES := slurm-wlm munge
# tmux: the REPL test types Ctrl-C on a real terminal.
APT_PACKAGES += tmux
DEMO         ?= protocols/sleep_light
DEMO_OUT     ?= demo-report
BIN_RELEASE  := .build/release/sensorium
PREFIX       ?= /usr/local
FUZZ_SEED    ?= 1
FUZZ_CASES   ?= 5000
FUZZ_JOBS    ?= 2

.PHONY: all deps slurm-deps apt-install build release demo test embedding-example slurm-test lua-testsuite golden bench bench-peers fuzz install uninstall clean jupyter jupyter-test

all: build

## deps: install the system libraries the package links (Lua 5.4, libedit) and pkg-config,
## and stock `lua5.4` (compared against by `sensorium bench lua` and the Lua tests)
deps:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(APT_PACKAGES)"

## slurm-deps: Debian's Slurm (slurmctld, slurmd, sbatch…) and munge, for slurm-test
slurm-deps:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(SLURM_PACKAGES)"

apt-install:
	@missing=""; \
	for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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

## demo: build and run the flagship protocol on the simulator; ends with the HTML report's path
demo: release
	$(BIN_RELEASE) run $(DEMO) --out $(DEMO_OUT)
	@echo "report: $(abspath $(DEMO_OUT))/index.html"


## test: the import rule (docs/architecture.md), the build with no compiler warnings in our own sources
## (scripts/check-warnings.sh builds and checks), every unit test, the golden protocols, a brief
## fixed-count fuzz run, then a cohort on a one-node Slurm cluster
test: deps
	sh scripts/check-imports.sh
	SWIFT="$(SWIFT)" sh scripts/check-warnings.sh
	@# A hung test fails the run after 45 minutes instead of holding CI to its own limit.
	timeout -k 30 2700 $(SWIFT) test --skip-build
	.build/debug/sensorium test protocols/
	.build/debug/sensorium fuzz --cases 50 --seed $(FUZZ_SEED)
	$(MAKE) --no-print-directory embedding-example
	$(MAKE) --no-print-directory lua-testsuite
	$(MAKE) --no-print-directory jupyter-test
	$(MAKE) --no-print-directory slurm-test

## embedding-example: build Examples/Embedding (a program that embeds the Sensorium library by
## path, with its own data source and Lua function), run it in its folder and compare its output
## with the committed Examples/Embedding/expected-output.txt (made by running it, then reviewed)
## SwiftPM does not notice files moved between the library's targets from a package that
## depends on it by path: the example's build plan is dropped (its objects kept) when the list
## of the library's sources changes.
embedding-example:
	@stamp=$$(git ls-files Package.swift Sources | md5sum | cut -c1-32); \
	if [ "$$(cat Examples/Embedding/.build/sources.stamp 2>/dev/null)" != "$$stamp" ]; then \
	  rm -f Examples/Embedding/.build/debug.yaml Examples/Embedding/.build/build.db; fi; \
	mkdir -p Examples/Embedding/.build && echo "$$stamp" > Examples/Embedding/.build/sources.stamp
	$(SWIFT) build --package-path Examples/Embedding
	cd Examples/Embedding && .build/debug/Embedding > .build/output.txt
	diff -u Examples/Embedding/expected-output.txt Examples/Embedding/.build/output.txt

## lua-testsuite: Lua 5.4.4's own test suite (its testes/ folder) through `sensorium run`,
## minus the blocks contrib/lua-testsuite/removals.txt lists (about 5 s). The files come
## from PyPI, which CI reaches: contrib/lua-testsuite/fetch-testes.sh takes them from the
## sdist of lupa==2.0 (third-party/lua54/testes/, Lua 5.4.4 by its lua.h, sha256 pinned)
## into .build/lua-5.4.4; never into the repository. When the registry cannot be reached
## it says so in a loud line and is skipped.
LUA_TESTES := .build/lua-5.4.4/testes
lua-testsuite:
	$(SWIFT) build --product sensorium
	@if [ ! -f $(LUA_TESTES)/all.lua ]; then sh contrib/lua-testsuite/fetch-testes.sh .build/lua-5.4.4; fi; \
	if [ -f $(LUA_TESTES)/all.lua ]; then sh contrib/lua-testsuite/run.sh $(LUA_TESTES) .build/debug/sensorium; \
	else echo; echo "*** lua-testsuite: SKIPPED: Lua 5.4.4's test suite could not be fetched from PyPI (lupa==2.0 sdist); see the lines above ***"; echo; fi

## slurm-test: start slurmctld + slurmd on localhost, run a cohort as a 3-shard array job
## with a dependent merge job, and compare the result byte for byte with one process's
SLURM_TEST_COHORT ?= protocols/data_quality 3 --participants 6 --days 4
slurm-test: slurm-deps
	$(SWIFT) build --product sensorium
	sh contrib/slurm/local-cluster-test.sh .build/debug/sensorium $(SLURM_TEST_COHORT)

## fuzz: the long fuzz run (release build): FUZZ_CASES cases from FUZZ_SEED, FUZZ_JOBS at once
fuzz: release
	$(BIN_RELEASE) fuzz --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS)

## install: sensorium into $(PREFIX)/bin (the stdlib and the API reference are built into it)
install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN_RELEASE) $(DESTDIR)$(PREFIX)/bin/sensorium

## uninstall: also removes the stdlib folder earlier versions installed
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sensorium
	rm -rf $(DESTDIR)$(PREFIX)/share/sensorium

bench: release
	$(BIN_RELEASE) bench lua

PEERS_VENV := .build/peers-venv

## bench-peers: Sensorium (simulated, stored; each as the one-pass and the natural four-statement protocol;
## a Swift loop) beside polars, DuckDB and pandas on one
## participant-week of 50 Hz accelerometer; pip installs the peers into $(PEERS_VENV)
bench-peers: release
	@python3 -c "import ensurepip, venv" 2>/dev/null || $(MAKE) APT_PACKAGES="python3-venv python3-pip" deps
	@test -x $(PEERS_VENV)/bin/python || python3 -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install -q -r bench/peers/requirements.txt
	$(PEERS_VENV)/bin/python bench/peers/run.py --sensorium $(BIN_RELEASE)

JUPYTER_VENV := .build/jupyter-venv

## jupyter: Sensorium's Jupyter kernel ("sensorium") and Jupyter's own packages (pip, into
## $(JUPYTER_VENV)); then `$(JUPYTER_VENV)/bin/jupyter ...` or any Jupyter that lists the spec
jupyter:
	$(SWIFT) build --product sensorium
	@python3 -c "import ensurepip, venv" 2>/dev/null || $(MAKE) APT_PACKAGES="python3-venv python3-pip" deps
	@test -x $(JUPYTER_VENV)/bin/python || python3 -m venv $(JUPYTER_VENV)
	$(JUPYTER_VENV)/bin/pip install -q -r contrib/jupyter/requirements.txt
	$(JUPYTER_VENV)/bin/python contrib/jupyter/install_kernel.py --prefix $(JUPYTER_VENV) --sensorium .build/debug/sensorium

## jupyter-test: the kernel's conformance (jupyter_kernel_test) and the example notebook
## docs/notebook.ipynb executed headless by nbclient, rendered to HTML by nbconvert
jupyter-test: jupyter
	cd contrib/jupyter && ../../$(JUPYTER_VENV)/bin/python -m unittest -v test_kernel
	$(JUPYTER_VENV)/bin/python contrib/jupyter/check_notebook.py docs/notebook.ipynb .build/jupyter

clean:
	rm -rf .build $(DEMO_OUT)
