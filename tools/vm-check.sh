#!/usr/bin/env bash
# tools/vm-check.sh: run the series' NUMA TAP tests (src/test/numa) inside
# QEMU guests with several NUMA topologies (vm/run-guest), against the
# development build.  Timing inside the guests means nothing; placement,
# page counts and errors are real.
#
# Usage: vm-check.sh [TOPOLOGY...]   (default: all; see the list below)
# After the topologies, unless TOPOLOGYs are named and "numamem" or
# "locality" is not one of them: the self-test of the memory access counter
# (vm/numamem/selftest, two short guests of its own, about 30 s) and a smoke
# run of the locality measurement (vm/locality.sh --smoke, one guest, about
# 3 minutes); each a loud skip, not a failure, where the counter cannot be
# built.
# Exit status 0 if everything passed; 1 if something failed; 77 if the VM
# cannot be run here (no QEMU or guest kernel), which callers must report as
# a skip, never as a pass.
. "$(dirname "$0")/lib.sh"

# The 4-node guest's distances (QEMU assumes them symmetric): unequal, so
# that 006_locality sees a nearest node (node 3's is node 2).
DISTANCES_4=""
for d in 0,1,15 0,2,25 0,3,30 1,2,20 1,3,25 2,3,12; do
	IFS=, read -r src dst val <<<"$d"
	DISTANCES_4+=" --qemu-arg -numa --qemu-arg dist,src=$src,dst=$dst,val=$val"
done
# name | run-guest topology options | environment for the tests | tests
# (PG_TEST_VARIANT=NAME in the environment: run them against that build
# variant of lib.sh instead of the development build)
TOPOLOGIES=(
	"2nodes|--nodes 2 --cpus-per-node 1 --mem-per-node 1G --hugepages-per-node 64,64|PG_TEST_NUMA_NODES=2 PG_TEST_NUMA_HUGE=enough|001_shmem_interleave 003_shared_buffers_numa 006_locality 007_locality_balance 008_dsm_interleave"
	"4nodes|--nodes 4 --cpus-per-node 1 --mem-per-node 512M $DISTANCES_4|PG_TEST_NUMA_NODES=4|001_shmem_interleave 003_shared_buffers_numa 006_locality 007_locality_balance 008_dsm_interleave"
	"3nodes-cxl|--nodes 3 --cpus-per-node 1 --mem-per-node 1G,1G,512M --memory-only-nodes 2|PG_TEST_NUMA_NODES=3|001_shmem_interleave 003_shared_buffers_numa"
	"2nodes-unequal|--nodes 2 --cpus-per-node 1 --mem-per-node 1536M,256M|PG_TEST_NUMA_NODES=2 PG_TEST_NUMA_FILL=512MB|004_unequal_nodes"
	"2nodes-exec-backend|--nodes 2 --cpus-per-node 1 --mem-per-node 1G|PG_TEST_NUMA_NODES=2 PG_TEST_VARIANT=exec_backend|003_shared_buffers_numa 008_dsm_interleave"
	"17nodes|--nodes 17 --cpus-per-node 1 --mem-per-node 128M|PG_TEST_NUMA_NODES=17|005_many_nodes"
	"2nodes-hugepages-node0|--nodes 2 --cpus-per-node 1 --mem-per-node 1G --hugepages-per-node 128,0|PG_TEST_NUMA_NODES=2 PG_TEST_NUMA_HUGE=short|003_shared_buffers_numa"
)

# Time limits follow the work.  Each test runs under a limit of its own,
# VM_TIMEOUT_MULTIPLIER (default 3) times its base in VM_TEST_SECONDS; a
# guest's limit is the sum of its tests' limits, TEST_SLACK_SECONDS more per
# test (killing a test that ran out of time, copying its logs), and
# VM_BOOT_SECONDS to boot and power off.  A base is the longest the test
# was seen to take in a guest, on a slower 2-core machine that was also
# running other work; where that was not seen, eight times its time on a
# quiet 2-core machine here, the ratio seen for the others.  In December
# 2026, quiet / two busy processes beside it / slower and busy:
#   001_shmem_interleave      14-15 s / 37 s / 95-115 s
#   003_shared_buffers_numa   15-21 s / 53 s / 139-156 s
#   004_unequal_nodes         35 s
#   005_many_nodes            11 s
#   006_locality              12-13 s / 56 s / 87-110 s
#   007_locality_balance      17-24 s / 43 s / (not seen)
#   008_dsm_interleave        25 s in a guest, beside one other busy process
# So a machine at half the speed of the slowest seen still passes.  A hung
# test costs its own limit, and the tests after it still run.  The tests'
# own waits (polls of pg_buffercache_partitions and the like) follow
# PG_TEST_TIMEOUT_DEFAULT, as PostgreSQL's do; when it is set above its
# default of 180 s, it is passed on to the guest and the limits here grow in
# proportion.
declare -A VM_TEST_SECONDS=(
	[001_shmem_interleave]=120 [003_shared_buffers_numa]=160 [004_unequal_nodes]=280
	[005_many_nodes]=90 [006_locality]=120 [007_locality_balance]=200 [008_dsm_interleave]=150
)
VM_TIMEOUT_MULTIPLIER=${VM_TIMEOUT_MULTIPLIER:-3}
VM_BOOT_SECONDS=${VM_BOOT_SECONDS:-120}
TEST_SLACK_SECONDS=45
for v in VM_TIMEOUT_MULTIPLIER VM_BOOT_SECONDS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a whole number of at least 1, not '${!v}'"
done
[ -z "${VM_TIMEOUT:-}" ] ||
	warn "VM_TIMEOUT is no longer used by vm-check: the limits follow the tests (VM_TIMEOUT_MULTIPLIER)"
timeout_scale=$VM_TIMEOUT_MULTIPLIER
if [ -n "${PG_TEST_TIMEOUT_DEFAULT:-}" ]; then
	[[ $PG_TEST_TIMEOUT_DEFAULT =~ ^[1-9][0-9]*$ ]] ||
		die "PG_TEST_TIMEOUT_DEFAULT must be a number of seconds, not '$PG_TEST_TIMEOUT_DEFAULT'"
	[ "$PG_TEST_TIMEOUT_DEFAULT" -le 180 ] ||
		timeout_scale=$(((VM_TIMEOUT_MULTIPLIER * PG_TEST_TIMEOUT_DEFAULT + 179) / 180))
fi

# test_limit TEST: its time limit in seconds.
test_limit() {
	echo $((VM_TEST_SECONDS[$1] * timeout_scale))
}

# show_guest_progress NAME: the output of guest NAME as it runs: its
# topology, and when each test starts and ends (the marker lines of
# tools/vm-numa-tests.sh), named NAME/TEST so that a log's tail says which.
show_guest_progress() {
	sed -un -e "s|^# vm-test \\(.*\\)\$|    $1/\\1|p" \
		-e '/^# \(guest\|node [0-9]\+ \(cpus\|size\)\)/s/^/    /p' \
		-e '/^# \/sys.*nr_hugepages/s/^/    /p'
}

# report_guest NAME LOG LIMIT: for a guest that did not finish its tests
# (killed at its time limit of LIMIT seconds, or stopped by a panic or a
# harness failure), which test was running and for how long.
report_guest() {
	local name=$1 log=$2 limit=$3 last test since
	! grep -q '^# vm-tests: ' "$log" || return 0
	last=$(grep -E '^# vm-test ' "$log" | tail -n 1 || true)
	if [[ $last =~ ^#\ vm-test\ (.*):\ started\ at\ ([0-9]+)\ s ]]; then
		test=${BASH_REMATCH[1]} since=${BASH_REMATCH[2]}
		if grep -q '^run-guest: timeout' "$log"; then
			info "$name/$test: still running when the guest's time ran out (for about $(fmt_duration $((limit - since))))"
		else
			info "$name/$test: was running when the guest stopped (see the log)"
		fi
	elif [ -n "$last" ]; then
		info "$name: the guest stopped after its last test, while it powered off"
	else
		info "$name: the guest stopped before any test started (boot)"
	fi
}

# Every test named in TOPOLOGIES must have a base, checked before any guest
# runs.
for topology in "${TOPOLOGIES[@]}"; do
	IFS='|' read -r _ _ _ tests <<<"$topology"
	for test in $tests; do
		[ -n "${VM_TEST_SECONDS[$test]:-}" ] ||
			die "tools/vm-check.sh: no VM_TEST_SECONDS entry for test $test" \
				"add one: the longest it takes in a guest on a slow, busy machine"
	done
done

if ! with_heartbeat "preparing the guest" "$BUILD/vm-prepare.log" "$TOP/vm/run-guest" --prepare; then
	tail -n 5 "$BUILD/vm-prepare.log" >&2
	warn "cannot prepare the QEMU guest (see build/vm-prepare.log): NUMA VM tests NOT RUN"
	exit 77
fi

wanted=("$@")
# wanted NAME: NAME is to run (all are when none is named)
wanted() { [ ${#wanted[@]} = 0 ] || printf '%s\n' "${wanted[@]}" | grep -qx "$1"; }

# the numamem self-test alone needs no PostgreSQL build
if [ ${#wanted[@]} = 0 ] || printf '%s\n' "${wanted[@]}" | grep -vqx numamem; then
	"$TOP/tools/build.sh"
fi

results=$BUILD/vm-results
rm -rf "$results"
ensure_user_dirs "$results"

vm_share_checkout

failed=()
passed=()
start_all=$(date +%s)
for topology in "${TOPOLOGIES[@]}"; do
	IFS='|' read -r name topo envs tests <<<"$topology"
	wanted "$name" || continue
	dir=$results/$name
	ensure_user_dirs "$dir"
	envargs=()
	for e in $envs; do
		envargs+=(--env "$e")
		case $e in PG_TEST_VARIANT=*) build_variant "${e#PG_TEST_VARIANT=}" ;; esac
	done
	[ -z "${PG_TEST_TIMEOUT_DEFAULT:-}" ] || envargs+=(--env PG_TEST_TIMEOUT_DEFAULT)
	testargs=()
	guest_limit=$VM_BOOT_SECONDS
	for test in $tests; do
		limit=$(test_limit "$test")
		testargs+=("$test:$limit")
		guest_limit=$((guest_limit + limit + TEST_SLACK_SECONDS))
	done
	step "VM $name: $topo"
	info "time limit $(fmt_duration "$guest_limit") (tests: ${testargs[*]})"
	start=$(date +%s)
	set +e
	# shellcheck disable=SC2086
	"$TOP/vm/run-guest" $topo --timeout "$guest_limit" "${VM_SHARE_ARGS[@]}" --share "$dir" "${envargs[@]}" \
		-- "$TOP/tools/vm-numa-tests.sh" "$dir" "${testargs[@]}" 2>&1 | tee "$dir.log" | show_guest_progress "$name"
	rc=${PIPESTATUS[0]}
	set -e
	report_guest "$name" "$dir.log" "$guest_limit"
	took=$(fmt_duration $(($(date +%s) - start)))
	if [ $rc = 0 ] && grep -q '^# vm-tests: .* 0 failed, 0 timed out' "$dir.log"; then
		info "VM $name: passed ($took)"
		passed+=("$name")
	else
		grep -E '^not ok|^#   Failed|^# +(got|expected)' "$dir.log" | head -n 20 | sed 's/^/    /' >&2 || true
		case $rc in
			124) why="killed at its time limit" ;;
			125) why="the guest or run-guest failed" ;;
			*) why="exit status $rc" ;;
		esac
		info "VM $name: FAILED ($why, after $took; log: ${dir#$TOP/}.log, TAP logs in ${dir#$TOP/}/)"
		failed+=("$name")
	fi
done

# The tools of the software NUMA machine, checked in guests of their own:
# the memory access counter's self-test, and a smoke run of the locality
# measurement built on it (make vm-locality: that it works, no claims).  They
# exit 77 where the counter cannot be built (no QEMU source package to take
# the plugin header from): a skip, said loudly, as for the VM as a whole.
tool_notes=
# run_tool NAME WHAT COMMAND...
run_tool() {
	local name=$1 what=$2 rc took
	shift 2
	wanted "$name" || return 0
	step "VM $name: $what"
	local t0
	t0=$(date +%s)
	set +e
	"$@" 2>&1 | tee "$results/$name.log" | sed 's/^/    /'
	rc=${PIPESTATUS[0]}
	set -e
	took=$(fmt_duration $(($(date +%s) - t0)))
	case $rc in
	0)
		info "VM $name: passed ($took)"
		tool_notes+="; $name passed ($took)"
		;;
	77)
		warn "VM $name: SKIPPED: $(tail -n 1 "$results/$name.log")"
		tool_notes+="; $name SKIPPED (the access counter cannot be built here)"
		;;
	*)
		info "VM $name: FAILED (exit status $rc, after $took; log: ${results#"$TOP"/}/$name.log)"
		failed+=("$name")
		;;
	esac
}
run_tool numamem "the memory access counter's self-test (vm/numamem/selftest)" \
	env NUMAMEM_BUILD="$BUILD/numamem" "$TOP/vm/numamem/selftest"
run_tool locality "a smoke run of the locality measurement (vm/locality.sh --smoke)" \
	"$TOP/vm/locality.sh" --smoke

elapsed=$(fmt_duration $(($(date +%s) - start_all)))
if [ ${#failed[@]} -gt 0 ]; then
	echo "vm-check: ${#passed[@]} topologies passed, ${#failed[@]} failed (${failed[*]})${tool_notes} (${elapsed})"
	exit 1
fi
echo "vm-check: ${#passed[@]} topologies passed (${passed[*]})${tool_notes} (${elapsed})"
