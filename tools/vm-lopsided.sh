#!/usr/bin/env bash
# tools/vm-lopsided.sh: does locality cost cache capacity?  Every backend on
# one node of a 2-node guest, a data set larger than that node's share of
# the pool: the balancer must borrow the other node's partitions, or the
# reads from outside the pool grow.  Compares the series with and without
# its locality patches (0011-0012) in the same guest, by counts (reads per
# 1000 transactions), never by timing.
#
# Usage: vm-lopsided.sh [TRANSACTIONS [ARM=BINDIR...]]
# Default: 5000 transactions per client (4 clients), warm-up and measure;
# the arms the benchmark built (make bench with BENCH_ARMS="0009 0012") for
# the series without and with 0011-0012, or the development build for the
# latter.  Any build with libnuma will do.
. "$(dirname "$0")/lib.sh"

xacts=${1:-5000}
shift || true
arms=("$@")
if [ ${#arms[@]} -eq 0 ]; then
	[ -x "$BUILD/bench/0009/install/bin/postgres" ] ||
		die "no build of the series up to 0009" \
			"run make bench (BENCH_ARMS=\"0009 ...\") first, or give ARM=BINDIR arguments"
	arms=("0009=$BUILD/bench/0009/install/bin")
	if [ -x "$BUILD/bench/0012/install/bin/postgres" ]; then
		arms+=("0012=$BUILD/bench/0012/install/bin")
	else
		"$TOP/tools/build.sh"
		arms+=("series=$BUILD/install/bin")
	fi
fi

"$TOP/vm/run-guest" --prepare >"$BUILD/vm-prepare.log" 2>&1 ||
	die "cannot prepare the QEMU guest" "see build/vm-prepare.log"
vm_share_checkout
step "2-node guest, every backend on node 0: ${arms[*]}"
"$TOP/vm/run-guest" --nodes 2 --cpus-per-node 1 --mem-per-node 1G \
	--timeout "${VM_TIMEOUT:-1200}" "${VM_SHARE_ARGS[@]}" \
	-- "$TOP/tools/vm-lopsided-guest.sh" "$xacts" "${arms[@]}"
