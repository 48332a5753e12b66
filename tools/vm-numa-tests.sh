#!/usr/bin/env bash
# tools/vm-numa-tests.sh: runs inside a vm/run-guest guest, as the
# unprivileged user: the NUMA TAP tests of src/test/numa against the
# development build (build/install), with all writes in the guest's tmpfs.
# Logs are copied to the directory given as first argument (a --share).
#
# Usage: vm-numa-tests.sh RESULTDIR TEST[:SECONDS]...
#   TEST: e.g. 001_shmem_interleave; SECONDS: its time limit (default: none).
# Each test runs on its own, under its limit, so that one slow or hung test
# does not take the guest's whole time with it.  Marker lines, read by
# tools/vm-check.sh, say when each test started and how it ended:
#   # vm-test NAME: started at U s (limit S s)     (U: the guest's uptime)
#   # vm-test NAME: passed in N s | FAILED in N s | TIMED OUT after N s
#   # vm-tests: P passed, F failed, T timed out
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

cd "$SRC/src/test/numa"

# end_leftovers NAME: after a test was killed, end what it left running:
# its script (prove dies at once on SIGTERM and leaves it behind, tearing
# down), and its servers, which pg_ctl put in sessions of their own, out of
# reach of timeout(1).  The guest is ours alone, and its tests run one at a
# time: every postgres process of ours is the killed test's.
end_leftovers() {
	pkill -KILL -f "t/$1\.pl" 2>/dev/null || true
	pkill -KILL -x postgres 2>/dev/null || true
	local i
	for ((i = 0; i < 50; i++)); do
		pgrep -x postgres >/dev/null || pgrep -f "t/$1\.pl" >/dev/null || return 0
		sleep 0.2
	done
	echo "# vm-test $1: processes left behind after it was killed:"
	pgrep -a -x postgres | sed 's/^/#   /' || true
}

passed=0 failed=0 timed_out=0
for arg in "$@"; do
	name=${arg%%:*} limit=0
	[ "$name" = "$arg" ] || limit=${arg#*:}
	echo "# vm-test $name: started at $(cut -d. -f1 /proc/uptime) s (limit $([ "$limit" = 0 ] && echo none || echo "$limit s"))"
	start=$SECONDS
	rc=0
	# With limit 0, timeout(1) never fires.
	timeout --kill-after=15 "$limit" prove --timer -I "$SRC/src/test/perl" "t/$name.pl" || rc=$?
	took=$((SECONDS - start))
	if [ $rc = 124 ] || { [ $rc = 137 ] && [ "$limit" != 0 ] && [ $took -ge "$limit" ]; }; then
		echo "# vm-test $name: TIMED OUT after $took s"
		echo "# the end of its log (regress_log_$name):"
		tail -n 8 "$TESTLOGDIR/regress_log_$name" 2>/dev/null | sed 's/^/#   /' || true
		end_leftovers "$name"
		timed_out=$((timed_out + 1))
	elif [ $rc = 0 ]; then
		echo "# vm-test $name: passed in $took s"
		passed=$((passed + 1))
	else
		echo "# vm-test $name: FAILED in $took s$([ $rc -gt 128 ] && echo " (killed by signal $((rc - 128)); out of memory?)")"
		[ $rc -le 128 ] || end_leftovers "$name"
		failed=$((failed + 1))
	fi
	# the logs so far, in case the guest does not live to the end
	cp -r "$TESTLOGDIR"/. "$results"/ 2>/dev/null || true
done
echo "# vm-tests: $passed passed, $failed failed, $timed_out timed out"
[ $((failed + timed_out)) = 0 ]
