#!/usr/bin/env bash
# tools/vm-numa-tests.sh: runs inside a vm/run-guest guest, as the
# unprivileged user: the NUMA TAP tests of src/test/numa against the
# development build (build/install), with all writes in the guest's tmpfs.
# Logs are copied to the directory given as first argument (a --share).
#
# Usage: vm-numa-tests.sh RESULTDIR TEST...   (TEST: e.g. 001_shmem_interleave)
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$TOP/build
SRC=$BUILD/src
results=$1
shift

# the development build, or a build variant (tools/lib.sh)
bld=$BUILD/meson inst=$BUILD/install
if [ -n "${PG_TEST_VARIANT:-}" ]; then
	bld=$BUILD/variant-$PG_TEST_VARIANT inst=$BUILD/variant-$PG_TEST_VARIANT-install
	echo "# build variant $PG_TEST_VARIANT"
fi
export PATH=$inst/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PG_REGRESS=$bld/src/test/regress/pg_regress
export TESTLOGDIR=$VM_SCRATCH/log
export TESTDATADIR=$VM_SCRATCH/data
export with_libnuma=yes
mkdir -p "$TESTLOGDIR" "$TESTDATADIR"

echo "# guest: $(nproc) CPUs; $(numactl --hardware | head -n 1)"
numactl --hardware | sed 's/^/# /'
grep -H . /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null | sed 's/^/# /' || true

tests=()
for t in "$@"; do tests+=("$SRC/src/test/numa/t/$t.pl"); done

cd "$SRC/src/test/numa"
rc=0
prove --timer -I "$SRC/src/test/perl" "${tests[@]}" || rc=$?
cp -r "$TESTLOGDIR"/. "$results"/ 2>/dev/null || true
exit $rc
