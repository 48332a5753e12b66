#!/usr/bin/env bash
# bench/bench.sh: benchmark the series against stock PostgreSQL 18.6.
#
# Usage: bench/bench.sh [--quick]      (make bench, make bench-quick)
#
# Builds the arms as release builds with the same options, in their own
# build directories (build/bench/<arm>): stock 18.6 with the measurement-only
# patch bench/stock-counters.patch, and the series up to each patch listed in
# BENCH_ARMS (default: 0004, "partitioning alone", and 0008, the clock-sweep
# patches), and in full mode the last arm again with the values of
# clock_sweep_max_chances in BENCH_FRONTIER (default "128 1000000", on the
# zipfian workloads only: the bound's trade-off).  Then runs bench/bench.py as the unprivileged user, which runs the
# workloads against every arm, interleaved, and writes the report:
#   full:  bench/results/REPORT.md (+ runs.csv, PNG plots), about an hour
#   quick: build/bench/results-quick/REPORT.md, a few minutes (a smoke run:
#          one small pool, one short run per arm; no claims from it)
# While it runs, huge pages are reserved for the largest pool and
# transparent huge pages are off; both are restored at the end.
. "$(dirname "$0")/../tools/lib.sh"

mode=full
case "${1:-}" in
	--quick) mode=quick ;;
	"") ;;
	*) die "unknown option '$1'" "usage: bench/bench.sh [--quick]" ;;
esac

ARMS=(stock ${BENCH_ARMS:-0004 0008})
BB=$BUILD/bench
WT=$BB/src
if [ "$mode" = full ]; then
	OUT=${BENCH_OUT:-$TOP/bench/results}
else
	OUT=${BENCH_OUT:-$BB/results-quick}
fi

# Release builds, the same options for every arm; only what the benchmark
# needs (server, contrib, pgbench, psql).
MESON_BENCH_OPTS=(
	--buildtype=release -Dcassert=false
	-Dlibnuma=enabled -Dliburing=enabled -Dtap_tests=disabled -Ddocs=disabled
	-Dplperl=disabled -Dplpython=disabled -Dpltcl=disabled
	-Dnls=disabled -Dllvm=disabled
)

ensure_packages "${DEB_PACKAGES[@]}" python3-matplotlib
"$TOP/tools/tree.sh"

# One worktree for all arms, so that every arm's build directory sees the
# sources at the same relative path and ccache serves what did not change.
root=$(pristine_commit)
if ! git -C "$WT" rev-parse --git-dir >/dev/null 2>&1; then
	rm -rf "$WT"
	git -C "$SRC" worktree prune
	mkdir -p "$BB"
	git -C "$SRC" worktree add -q --detach "$WT" "$root"
fi
mapfile -t commits < <(git -C "$SRC" rev-list --reverse "$root"..HEAD)

bindirs=()
for arm in "${ARMS[@]}"; do
	git -C "$WT" reset -q --hard
	if [ "$arm" = stock ]; then
		git -C "$WT" checkout -q --detach "$root"
		git -C "$WT" apply "$TOP/bench/stock-counters.patch" ||
			die "bench/stock-counters.patch does not apply to stock $PG_UPSTREAM_VERSION"
		label="stock $PG_UPSTREAM_VERSION + bench/stock-counters.patch"
	else
		n=$((10#$arm))
		[ "$n" -ge 1 ] && [ "$n" -le ${#commits[@]} ] ||
			die "no patch $arm in the series (it has ${#commits[@]})"
		c=${commits[$((n - 1))]}
		git -C "$WT" checkout -q --detach "$c"
		label="series up to $arm ($(git -C "$SRC" log -1 --format=%s "$c"))"
	fi
	step "building arm '$arm': $label"
	"$TOP/tools/build.sh" "$WT" "$BB/$arm/meson" "$BB/$arm/install" "${MESON_BENCH_OPTS[@]}" ||
		die "arm '$arm' does not build"
	bindirs+=("$arm=$BB/$arm/install/bin")
	echo "$label" >"$BB/$arm/label"
done
git -C "$WT" reset -q --hard

# The bound's frontier: the last arm again with other values of
# clock_sweep_max_chances, on the zipfian workloads (full mode only).
if [ "$mode" = full ] && [ -n "${BENCH_FRONTIER-128 1000000}" ]; then
	last=${ARMS[-1]}
	for t in ${BENCH_FRONTIER-128 1000000}; do
		bindirs+=("$last@$t=$BB/$last/install/bin")
	done
fi

# Machine settings for the run, restored on exit: huge pages for the largest
# pool (if the kernel gives them), transparent huge pages off.
restore=()
cleanup() {
	for r in "${restore[@]}"; do eval "$r" || true; done
}
trap cleanup EXIT
huge_pages=off
if is_root && [ -w /proc/sys/vm/nr_hugepages ]; then
	want_mb=$([ "$mode" = full ] && echo 2048 || echo 128)
	want=$(((want_mb + want_mb / 8 + 64) / 2))
	old=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$old" -lt "$want" ]; then
		restore+=("echo $old >/proc/sys/vm/nr_hugepages")
		echo "$want" >/proc/sys/vm/nr_hugepages || true
	fi
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge "$want" ] && huge_pages=on
fi
thp=/sys/kernel/mm/transparent_hugepage/enabled
if is_root && [ -w "$thp" ]; then
	old=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
	restore+=("echo $old >$thp")
	echo never >"$thp" || true
fi

ensure_user_dirs "$OUT" "$BB/data"
step "running the benchmark ($mode) as $PGUSER_LOCAL: results in ${OUT#$TOP/}"
as_user /usr/bin/python3 "$TOP/bench/bench.py" --mode "$mode" --out "$OUT" \
	--data "$BB/data" --huge-pages "$huge_pages" \
	--command "make bench$([ "$mode" = quick ] && echo -quick)" \
	"${bindirs[@]}"
