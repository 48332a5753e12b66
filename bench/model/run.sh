#!/bin/bash
# Regenerates results.md (every table of README.md) and raw.txt.  Sequential, nice 19.
# usage: bench/model/run.sh [workload ...]   (default: all; see run.py)
set -e
cd "$(dirname "$0")"
cc -O2 -Wall -o clocksim clocksim.c -lm
python3 run.py "$@"
