# Entry points of the NUMA-aware shared buffers series.  The scripts live in
# tools/; see README.md for what each target does.
SHELL := /bin/bash

.PHONY: demo check check-core check-world check-series check-variants vm-check vm-lopsided vm-locality abi-check bench bench-quick tree export build help

help:
	@echo "make demo          build the series and show it working on a small cluster"
	@echo "make check         build the series and run all tests: core suites, no-libnuma"
	@echo "                   build, NUMA tests in multi-node VMs, ABI check (CI runs this)"
	@echo "make check-core    only the core suites of the development build"
	@echo "make check-world   every test of the tree, PostgreSQL's own included (not in CI)"
	@echo "make vm-check      only the NUMA tests in QEMU guests (2, 3, 4 nodes, huge pages)"
	@echo "make vm-lopsided   misses of a load on one node of a 2-node guest, with and without"
	@echo "                   the locality patches (needs make bench's 0009 arm, BENCH_ARMS=\"0009 0012\"; not in CI)"
	@echo "make vm-locality   where a server's memory accesses go, by (CPU node, memory node): stock"
	@echo "                   18.6 and the series in 2- and 4-node guests (8 guests of 2-4 min, not in CI;"
	@echo "                   make vm-check runs a smoke of it): vm/results/locality.md"
	@echo "make check-series  build and smoke-test every prefix of the series"
	@echo "make check-variants  build without libnuma and with EXEC_BACKEND, run the NUMA suites"
	@echo "make abi-check     compare the ABI of postgres with stock 18.6 (abidiff)"
	@echo "make bench         benchmark stock 18.6 against the series (release builds, about an"
	@echo "                   hour): bench/results/REPORT.md"
	@echo "make bench-quick   a smoke run of the benchmark (a few minutes, no claims)"
	@echo "make tree          create build/src from upstream + patches/ (FORCE=1 recreates)"
	@echo "make export        rewrite patches/ from the commits in build/src"
	@echo "make build         build and install the series (build/meson, build/install)"

demo:
	@tools/demo.sh

check:
	@tools/check-all.sh

check-core:
	@tools/check.sh

check-world:
	@tools/check-world.sh

vm-check:
	@tools/vm-check.sh $(TOPOLOGIES)

vm-lopsided:
	@tools/vm-lopsided.sh $(TRANSACTIONS)

vm-locality:
	@vm/locality.sh $(NODES)

check-series:
	@tools/check-series.sh

check-variants:
	@tools/check-variants.sh $(VARIANTS)

abi-check:
	@tools/abi-check.sh

bench:
	@bench/bench.sh

bench-quick:
	@bench/bench.sh --quick

tree:
	@tools/tree.sh

export:
	@tools/export.sh

build:
	@tools/build.sh
