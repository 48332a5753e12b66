# Entry points of the NUMA-aware shared buffers series.  The scripts live in
# tools/; see README.md for what each target does.
SHELL := /bin/bash

.PHONY: demo check check-series tree export build help

help:
	@echo "make demo          build the series and show it working on a small cluster"
	@echo "make check         build the series and run the test suites (CI runs this)"
	@echo "make check-series  build and smoke-test every prefix of the series"
	@echo "make tree          create build/src from upstream + patches/ (FORCE=1 recreates)"
	@echo "make export        rewrite patches/ from the commits in build/src"
	@echo "make build         build and install the series (build/meson, build/install)"

demo:
	@tools/demo.sh

check:
	@tools/check.sh

check-series:
	@tools/check-series.sh

tree:
	@tools/tree.sh

export:
	@tools/export.sh

build:
	@tools/build.sh
