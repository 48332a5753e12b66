#!/usr/bin/env bash
# vm/dsm-locality.sh: where a parallel hash join's accesses to dynamic
# shared memory go, by (CPU node, memory node), with shmem_interleave off
# and all (patch 0021), counted by the numamem plugin (vm/README.md,
# "Counting memory accesses") in guests of 2 (and 4) nodes, 1 vCPU each.
#
# Usage: vm/dsm-locality.sh [NODES...]        (default: 2 4)
# Environment: DSM_ROWS (rows of each table, default 100000), DSM_LLC (the
# plugin's llc=, default 4:16: a 4 MiB 16-way LLC per vCPU),
# DSM_RESULTS (default vm/results/dsm-locality.md).
#
# In each guest (vm/dsm-locality/guest.sh): the postmaster, hence the
# leader, on CPU 0 (node 0), nodes-1 parallel workers pinned one per other
# node; dynamic_shared_memory_type = posix, min_dynamic_shared_memory = 0,
# so that the hash table is in real DSM segments.  Attribution: the plugin
# knows virtual addresses only, and each process maps a segment where its
# mmap() lands.  An LD_PRELOAD shim (vm/dsm-locality/dsmmap.c) places every
# mapping of /dev/shm/PostgreSQL.* in every process in one reserved range,
# [0x100000000000, 0x200000000000), which the guest checks holds nothing
# else (held run, /proc/PID/maps of every participant); the main segment is
# at the postmaster's address in every backend.  Areas: main, dsmctl (the
# DSM control segment), dsm (every other segment), kernel (>= 2^47 + sign
# extension), other.
#
# Exit status: 0; 77 if the plugin cannot be built or no guest can run
# here (a skip); 1 on failure.  Per guest ~1-2 minutes on a 2-core host.
. "$(dirname "$0")/../tools/lib.sh"

node_counts=("$@")
[ ${#node_counts[@]} -gt 0 ] || node_counts=(2 4)
LLC=${DSM_LLC:-4:16}
ROWS=${DSM_ROWS:-100000}
RESULTS=${DSM_RESULTS:-$TOP/vm/results/dsm-locality.md}
OUT=$BUILD/dsm-locality
MEM=1G

numamem_prepare dsm-locality "$OUT"
[ -x "$BUILD/install/bin/postgres" ] || die "no installed build in $BUILD/install"

step "building the shim and pagenodes (build/dsm-locality)"
gcc -O2 -Wall -shared -fPIC -o "$OUT/dsmmap.so" "$TOP/vm/dsm-locality/dsmmap.c" -ldl ||
	die "cannot build vm/dsm-locality/dsmmap.c"
gcc -O2 -Wall -o "$OUT/pagenodes" "$TOP/vm/dsm-locality/pagenodes.c" -lnuma ||
	die "cannot build vm/dsm-locality/pagenodes.c (libnuma-dev?)"

vm_share_checkout
runs=()
for n in "${node_counts[@]}"; do
	for setting in off all; do
		tag=n$n-$setting
		dir=$OUT/$tag
		rm -rf "$dir"
		ensure_user_dirs "$dir"
		chmod 755 "$dir"
		topo=(--nodes "$n" --cpus-per-node 1 --mem-per-node "$MEM")
		mapfile -t NM < <("$TOP/vm/numamem/plugin-args" "${topo[@]}" -- \
			"out=$dir/counts.tsv" "filter=$dir/filter" "llc=$LLC")
		cmd=("$TOP/vm/run-guest" "${topo[@]}" "${NM[@]}" --share "$dir" "${VM_SHARE_ARGS[@]}"
			--env "DSM_ROWS=$ROWS" --timeout "${VM_TIMEOUT:-290}"
			-- "$TOP/vm/dsm-locality/guest.sh" "$setting" "$dir")
		printf '%q ' "${cmd[@]}" >"$dir/command"
		step "$n nodes, shmem_interleave = $setting"
		t0=$SECONDS
		rc=0
		"${cmd[@]}" >"$dir/guest.out" 2>&1 || rc=$?
		echo $((SECONDS - t0)) >"$dir/wall"
		if [ $rc != 0 ]; then
			tail -n 30 "$dir/guest.out" >&2
			die "the guest run $tag failed (status $rc)" "see $dir/guest.out"
		fi
		info "done in $(fmt_duration $((SECONDS - t0)))"
		runs+=("$dir")
	done
done

mkdir -p "$(dirname "$RESULTS")"
perl "$TOP/vm/dsm-locality/report.pl" "$LLC" "$ROWS" "${runs[@]}" >"$RESULTS.tmp"
mv "$RESULTS.tmp" "$RESULTS"
step "results: $RESULTS"
sed -n '/^## Summary/,/^## /p' "$RESULTS" | sed '$d'
