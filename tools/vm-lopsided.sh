#!/usr/bin/env bash
# tools/vm-lopsided.sh: does locality cost cache capacity?  Every backend on
# one node of a 2-node guest, a data set larger than that node's share of
# the pool: the balancer must lend the other node's partitions, or the
# reads from outside the pool grow.  Compares the series with and without
# its locality patches (0011-0012) in the same guest, by counts (reads per
# 1000 transactions), never by timing.
#
# Usage: vm-lopsided.sh [SECONDS [ARM=BINDIR...]]
# Default: 60 s windows; the arms the benchmark built (make bench with
# BENCH_ARMS including 0009) for the series without 0011-0012, and the
# development build for the whole series.  Any build with libnuma will do.
. "$(dirname "$0")/lib.sh"

seconds=${1:-60}
shift || true
arms=("$@")
if [ ${#arms[@]} -eq 0 ]; then
	[ -x "$BUILD/bench/0009/install/bin/postgres" ] ||
		die "no build of the series up to 0009" \
			"run make bench (BENCH_ARMS=\"0009 ...\") first, or give ARM=BINDIR arguments"
	"$TOP/tools/build.sh"
	arms=("0009=$BUILD/bench/0009/install/bin" "series=$BUILD/install/bin")
fi

"$TOP/vm/run-guest" --prepare >"$BUILD/vm-prepare.log" 2>&1 ||
	die "cannot prepare the QEMU guest" "see build/vm-prepare.log"
extra=()
case $TOP/ in
	/tmp/* | /run/* | /var/tmp/* | /dev/shm/*) extra=(--share "$TOP") ;;
esac
step "2-node guest, every backend on node 0: ${arms[*]}"
"$TOP/vm/run-guest" --nodes 2 --cpus-per-node 1 --mem-per-node 1G \
	--timeout "${VM_TIMEOUT:-1200}" "${extra[@]}" \
	-- "$TOP/tools/vm-lopsided-guest.sh" "$seconds" "${arms[@]}"
