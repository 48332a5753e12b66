#!/usr/bin/env bash
# vm/locality.sh: where the memory accesses of a running server go, by (CPU
# node, memory node), counted by the numamem QEMU plugin (vm/README.md,
# "Counting memory accesses") in guests of 2 and 4 nodes, for stock 18.6
# and the series side by side (make vm-locality).
#
# Usage: vm/locality.sh [--smoke] [NODES...]     (default: 2 4)
#
# Configurations (each a guest of its own, the same loads):
#   stock              pristine 18.6, first touch
#   stock-interleave   pristine 18.6 started under numactl --interleave=all
#                      (stock has no shmem_interleave)
#   series-interleave  the series, shmem_interleave = all
#   series-numa        the series, shared_buffers_numa = on
# Counting windows, one vCPU per node, LOC_SESSIONS sessions per node (each
# backend moved to its node's CPU before the window opens):
#   fill      after a restart (an empty pool), node k's sessions prewarm
#             their own table t_k (half the pool over all of them);
#             the pages' nodes are read from pg_buffercache_numa afterwards
#   affine    node k's sessions do point reads in t_k only, on that pool
#   uniform   u (a third of the pool) prewarmed by one session on the
#             first node (outside the window), then point reads in u from
#             every node
#   seqscan   every session scans s (1.5x the pool, through a ring)
#   writemix  every session updates random rows of w and appends to h
# The plugin's areas split the main shared memory segment: blocks, descs,
# meta (the clock-sweep's state), main (the rest); see vm/locality/guest.sh.
#
# Builds: LOC_STOCK_BIN (default build/bench/pristine/install/bin) and
# LOC_SERIES_BIN (default build/bench/NNNN/install/bin for the last patch),
# the release builds of make bench; where one is missing, it is built
# (bench/bench.sh --build-only).  --smoke: the development build only
# (build/install), series-numa, 2 nodes, fill and affine, a few hundred
# reads: a check that the tool works (CI), no claims; its report goes to
# build/locality-smoke/REPORT.md.
# Environment: LOC_POOL_MB (32), LOC_LOOKUPS (1000), LOC_SESSIONS (1),
# LOC_SCANS (1), LOC_LLC (the plugin's llc=, default 4:16), LOC_APART (1:
# two CPUs per node, the server's background processes on one of node 0's,
# counted apart by the plugin; see vm/locality/guest.sh),
# LOC_CONFIGS, LOC_LOADS (subsets, in the order above), LOC_OUT (the run
# directories, default build/locality), LOC_RESULTS (the
# report, default vm/results/locality.md; a plot beside it).
#
# Exit status: 0; 77 if the plugin cannot be built or no guest can run here
# (a skip); 1 on failure.
. "$(dirname "$0")/../tools/lib.sh"

smoke=no
if [ "${1:-}" = --smoke ]; then
	smoke=yes
	shift
fi
node_counts=("$@")
LLC=${LOC_LLC:-4:16}
if [ $smoke = yes ]; then
	[ ${#node_counts[@]} -gt 0 ] || node_counts=(2)
	CONFIGS=(${LOC_CONFIGS:-series-numa})
	LOADS=(${LOC_LOADS:-fill affine})
	export LOC_LOOKUPS=${LOC_LOOKUPS:-300} LOC_POOL_MB=${LOC_POOL_MB:-16}
	OUT=$BUILD/locality-smoke
	RESULTS=${LOC_RESULTS:-$OUT/REPORT.md}
	series_bin=$BUILD/install/bin
	stock_bin=
else
	[ ${#node_counts[@]} -gt 0 ] || node_counts=(2 4)
	CONFIGS=(${LOC_CONFIGS:-stock stock-interleave series-interleave series-numa})
	LOADS=(${LOC_LOADS:-fill affine uniform seqscan writemix})
	OUT=${LOC_OUT:-$BUILD/locality}
	RESULTS=${LOC_RESULTS:-$TOP/vm/results/locality.md}
	npatches=$(ls "$TOP"/patches/[0-9][0-9][0-9][0-9]-*.patch | grep -vc '/0000-')
	last=$(printf %04d "$npatches")
	stock_bin=${LOC_STOCK_BIN:-$BUILD/bench/pristine/install/bin}
	series_bin=${LOC_SERIES_BIN:-$BUILD/bench/$last/install/bin}
fi

numamem_prepare vm-locality "$OUT"

need_stock=no
for c in "${CONFIGS[@]}"; do [[ $c != stock* ]] || need_stock=yes; done
if [ $smoke = yes ]; then
	# current with build/src (a no-op if it is): a stale build/install
	# would measure the series as it was
	"$TOP/tools/build.sh" >"$OUT/build.log" 2>&1 ||
		die "the development build failed" "see $OUT/build.log"
else
	arms=()
	[ $need_stock = no ] || [ -x "$stock_bin/postgres" ] || [ -n "${LOC_STOCK_BIN:-}" ] || arms+=(pristine)
	[ -x "$series_bin/postgres" ] || [ -n "${LOC_SERIES_BIN:-}" ] || arms+=("$last")
	if [ ${#arms[@]} -gt 0 ]; then
		BENCH_ARMS="${arms[*]}" "$TOP/bench/bench.sh" --build-only
	fi
	[ $need_stock = no ] || [ -x "$stock_bin/postgres" ] || die "no stock build in $stock_bin"
fi
[ -x "$series_bin/postgres" ] || die "no series build in $series_bin"

# The 4-node guest's distances: two pairs of near nodes (as two sockets of
# two dies each), unequal as on real machines.
topology() {
	local n=$1
	TOPO=(--nodes "$n" --cpus-per-node "$([ "${LOC_APART:-0}" = 1 ] && echo 2 || echo 1)"
		--mem-per-node "$([ "$n" -le 2 ] && echo 1G || echo 512M)")
	# vCPUs are numbered node by node: node 0's second is vCPU 1
	APART_ARG=()
	[ "${LOC_APART:-0}" != 1 ] || APART_ARG=(apart=1)
	DIST=()
	if [ "$n" = 4 ]; then
		for d in 0,1,16 0,2,32 0,3,32 1,2,32 1,3,32 2,3,16; do
			IFS=, read -r src dst val <<<"$d"
			DIST+=(--qemu-arg -numa --qemu-arg "dist,src=$src,dst=$dst,val=$val")
		done
	fi
}

vm_share_checkout
runs=()
for n in "${node_counts[@]}"; do
	topology "$n"
	for config in "${CONFIGS[@]}"; do
		tag=n$n-$config
		dir=$OUT/$tag
		rm -rf "$dir"
		ensure_user_dirs "$dir"
		chmod 755 "$dir"
		bin=$series_bin
		[[ $config != stock* ]] || bin=$stock_bin
		mapfile -t NM < <("$TOP/vm/numamem/plugin-args" "${TOPO[@]}" -- \
			"out=$dir/counts.tsv" "filter=$dir/filter" "llc=$LLC" "${APART_ARG[@]}")
		envs=()
		for v in LOC_POOL_MB LOC_LOOKUPS LOC_SESSIONS LOC_SCANS LOC_APART; do
			[ -z "${!v:-}" ] || envs+=(--env "$v=${!v}")
		done
		cmd=("$TOP/vm/run-guest" "${TOPO[@]}" "${DIST[@]}" "${NM[@]}" --share "$dir"
			"${VM_SHARE_ARGS[@]}" "${envs[@]}" --env "NUMAMEM_BUILD=$BUILD/numamem"
			--timeout "${VM_TIMEOUT:-1500}"
			-- "$TOP/vm/locality/guest.sh" "$config" "$bin" "$dir" "${LOADS[@]}")
		printf '%q ' "${cmd[@]}" >"$dir/command"
		echo "$bin" >"$dir/bin"
		step "$n nodes, $config ($bin)"
		t0=$SECONDS
		rc=0
		"${cmd[@]}" >"$dir/guest.out" 2>&1 || rc=$?
		echo $((SECONDS - t0)) >"$dir/wall"
		if [ $rc != 0 ]; then
			tail -n 30 "$dir/guest.out" >&2
			die "the guest run $tag failed (status $rc)" "see $dir/guest.out and $dir/server.log"
		fi
		info "done in $(fmt_duration $((SECONDS - t0)))"
		runs+=("$dir")
	done
done

mkdir -p "$(dirname "$RESULTS")"
/usr/bin/python3 "$TOP/vm/locality/report.py" --llc "$LLC" --command "vm/locality.sh $([ $smoke = yes ] && echo '--smoke ')${node_counts[*]}" \
	--out "$RESULTS" "${runs[@]}" || die "the report could not be written"
step "results: ${RESULTS#"$TOP"/}"
sed -n '/^## Summary/,/^## [^S]/p' "$RESULTS" | sed '$d'
