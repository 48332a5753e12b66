#!/usr/bin/env bash
# bench/bench.sh: benchmark the series against stock PostgreSQL 18.6.
#
# Usage: bench/bench.sh [--quick | --build-only]   (make bench, make bench-quick)
#
# Builds the arms as release builds with the same options, in their own
# build directories (build/bench/<arm>): stock 18.6 with the measurement-only
# patch bench/stock-counters.patch; the series up to each patch listed in
# BENCH_ARMS (default: the last patch, the whole series; "0007 0009" compares
# the per-partition clock-sweeps and their balancer with the single hand of
# 0007; the quick mode builds the last one only); in full mode, pristine
# 18.6 for the cost measurements (no counters patch: its instructions per
# query are what the series' cost is judged against); in full mode, the arms of BENCH_EXTRA_ARMS, NAME=REV:N,
# the first N patches of patches/ as of revision REV of this repository
# (e.g. the series' previous replacement rule, "v1-0008=5d82d03:8"); and in
# full mode the last BENCH_ARMS arm again with each setting of
# BENCH_FRONTIER (e.g. "clock_sweep_min_trial=0
# clock_sweep_max_advances=1000000"), on the zipfian workloads only.
# Then runs bench/bench.py as the unprivileged user, which measures every
# arm and writes the report (see bench/README.md):
#   full:  bench/results/REPORT.md (+ CSV files, PNG plots), about two hours
#   quick: build/bench/results-quick/REPORT.md, a few minutes (a smoke run:
#          small pools, one short run per arm; no claims from it).  To keep
#          CI short, it builds no release arm: stock is built without
#          optimization (build/bench/quick-stock), and the whole series is
#          the development build (build/install; other arms are built
#          unoptimized too).
# --build-only: the full mode's release builds of the arms in BENCH_ARMS
# (stock, pristine and series prefixes by number) and nothing else (for
# vm/locality.sh, which measures those builds in guests).
# BENCH_ARGS passes options to bench.py (e.g. "--runs 1 --workloads
# zipf:128 --paired= --callgrind=hit" for a part of the measurements; see
# bench.py --help), BENCH_OUT another directory for the results.
# While it runs, huge pages are reserved for the largest pool and
# transparent huge pages are off; both are restored at the end.
. "$(dirname "$0")/../tools/lib.sh"

mode=full
build_only=no
case "${1:-}" in
	--quick) mode=quick ;;
	--build-only) build_only=yes ;;
	"") ;;
	*) die "unknown option '$1'" "usage: bench/bench.sh [--quick | --build-only]" ;;
esac

BB=$BUILD/bench
WT=$BB/src
if [ "$mode" = full ]; then
	OUT=${BENCH_OUT:-$TOP/bench/results}
else
	OUT=${BENCH_OUT:-$BB/results-quick}
fi

# Release builds, the same options for every arm; only what the benchmark
# needs (server, contrib, pgbench, psql).  The quick mode's builds are not
# optimized (they compile in a fraction of the time), in directories of
# their own, so that they do not replace the release builds.
MESON_BENCH_OPTS=(
	--buildtype=release -Dcassert=false
	-Dlibnuma=enabled -Dliburing=enabled -Dtap_tests=disabled -Ddocs=disabled
	-Dplperl=disabled -Dplpython=disabled -Dpltcl=disabled
	-Dnls=disabled -Dllvm=disabled
)
ARM_PREFIX=
if [ "$mode" = quick ]; then
	MESON_BENCH_OPTS=("${MESON_BENCH_OPTS[@]/--buildtype=release/--buildtype=plain}")
	ARM_PREFIX=quick-
fi

ensure_packages "${DEB_PACKAGES[@]}" python3-matplotlib valgrind
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

SERIES_ARMS=(${BENCH_ARMS:-$(printf %04d ${#commits[@]})})
if [ $build_only = yes ]; then
	ARMS=("${SERIES_ARMS[@]}")
	EXTRA=()
	FRONTIER=()
elif [ "$mode" = full ]; then
	ARMS=(stock pristine "${SERIES_ARMS[@]}")
	EXTRA=(${BENCH_EXTRA_ARMS-})
	FRONTIER=(${BENCH_FRONTIER-clock_sweep_max_advances=1000000})
else
	# a smoke run: stock and the last arm only, to keep CI short
	ARMS=(stock "${SERIES_ARMS[-1]}")
	EXTRA=()
	FRONTIER=()
fi

bindirs=()
build_arm() {
	local arm=$1 label=$2 dir=$BB/$ARM_PREFIX$1
	step "building arm '$arm': $label"
	"$TOP/tools/build.sh" "$WT" "$dir/meson" "$dir/install" "${MESON_BENCH_OPTS[@]}" ||
		die "arm '$arm' does not build"
	bindirs+=("$arm=$dir/install/bin")
	echo "$label" >"$dir/label"
}

for arm in "${ARMS[@]}"; do
	if [ "$mode" = quick ] && [ "$arm" != stock ] && [ "$((10#$arm))" -eq ${#commits[@]} ]; then
		step "arm '$arm': the development build (the whole series)"
		"$TOP/tools/build.sh"
		bindirs+=("$arm=$BUILD/install/bin")
		continue
	fi
	git -C "$WT" reset -q --hard
	git -C "$WT" clean -qfd
	if [ "$arm" = stock ]; then
		git -C "$WT" checkout -q --detach "$root"
		git -C "$WT" apply "$TOP/bench/stock-counters.patch" ||
			die "bench/stock-counters.patch does not apply to stock $PG_UPSTREAM_VERSION"
		label="stock $PG_UPSTREAM_VERSION + bench/stock-counters.patch"
	elif [ "$arm" = pristine ]; then
		git -C "$WT" checkout -q --detach "$root"
		label="pristine $PG_UPSTREAM_VERSION"
	else
		n=$((10#$arm))
		[ "$n" -ge 1 ] && [ "$n" -le ${#commits[@]} ] ||
			die "no patch $arm in the series (it has ${#commits[@]})"
		c=${commits[$((n - 1))]}
		git -C "$WT" checkout -q --detach "$c"
		label="series up to $arm ($(git -C "$SRC" log -1 --format=%s "$c"))"
	fi
	build_arm "$arm" "$label"
done

# Earlier versions of the series, from this repository's history.
for spec in "${EXTRA[@]}"; do
	arm=${spec%%=*} rev=${spec#*=}
	n=${rev##*:} rev=${rev%:*}
	git -C "$TOP" rev-parse -q --verify "$rev^{commit}" >/dev/null ||
		die "BENCH_EXTRA_ARMS: no revision $rev in this repository"
	git -C "$WT" reset -q --hard
	git -C "$WT" clean -qfd
	git -C "$WT" checkout -q --detach "$root"
	mapfile -t old < <(git -C "$TOP" ls-tree --name-only "$rev" patches/ |
		grep -E '/[0-9]{4}-' | grep -v '/0000-' | head -n "$n")
	[ "${#old[@]}" -eq "$n" ] || die "BENCH_EXTRA_ARMS: $rev has fewer than $n patches"
	for p in "${old[@]}"; do
		git -C "$TOP" show "$rev:$p" | git -C "$WT" apply --whitespace=nowarn ||
			die "BENCH_EXTRA_ARMS: $p of $rev does not apply"
	done
	build_arm "$arm" "the series as of $rev, up to patch $n ($(git -C "$TOP" show "$rev:${old[-1]}" |
		sed -n 's/^Subject: \[PATCH[^]]*\] //p' | head -n 1))"
done
git -C "$WT" reset -q --hard
git -C "$WT" clean -qfd
if [ $build_only = yes ]; then
	step "built: ${bindirs[*]}"
	exit 0
fi

# The rule's frontier: the last series arm again with other settings, on the
# zipfian workloads (full mode only).
last=${ARMS[-1]}
for f in "${FRONTIER[@]}"; do
	bindirs+=("$last@$f=$BB/$last/install/bin")
done

# Machine settings for the run, restored on exit: huge pages for the largest
# pool (if the kernel gives them), transparent huge pages off.
restore=()
cleanup() {
	for r in "${restore[@]}"; do eval "$r" || true; done
}
trap cleanup EXIT
huge_pages=off
if is_root && [ -w /proc/sys/vm/nr_hugepages ]; then
	# the largest pool, four times: the paired windows run four servers
	want_mb=$([ "$mode" = full ] && echo 2048 || echo 512)
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
	--main "$last" ${BENCH_ARGS:-} "${bindirs[@]}"
