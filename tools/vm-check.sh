#!/usr/bin/env bash
# tools/vm-check.sh: run the series' NUMA TAP tests (src/test/numa) inside
# QEMU guests with several NUMA topologies (vm/run-guest), against the
# development build.  Timing inside the guests means nothing; placement,
# page counts and errors are real.
#
# Usage: vm-check.sh [TOPOLOGY...]   (default: all; see the list below)
# Exit status 0 if every topology passed; 1 if one failed; 77 if the VM
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
	"2nodes|--nodes 2 --cpus-per-node 1 --mem-per-node 1G --hugepages-per-node 64,64|PG_TEST_NUMA_NODES=2 PG_TEST_NUMA_HUGE=enough|001_shmem_interleave 003_shared_buffers_numa 006_locality 007_locality_balance"
	"4nodes|--nodes 4 --cpus-per-node 1 --mem-per-node 512M $DISTANCES_4|PG_TEST_NUMA_NODES=4|001_shmem_interleave 003_shared_buffers_numa 006_locality 007_locality_balance"
	"3nodes-cxl|--nodes 3 --cpus-per-node 1 --mem-per-node 1G,1G,512M --memory-only-nodes 2|PG_TEST_NUMA_NODES=3|001_shmem_interleave 003_shared_buffers_numa"
	"2nodes-unequal|--nodes 2 --cpus-per-node 1 --mem-per-node 1536M,256M|PG_TEST_NUMA_NODES=2 PG_TEST_NUMA_FILL=512MB|004_unequal_nodes"
	"2nodes-exec-backend|--nodes 2 --cpus-per-node 1 --mem-per-node 1G|PG_TEST_NUMA_NODES=2 PG_TEST_VARIANT=exec_backend|003_shared_buffers_numa"
	"17nodes|--nodes 17 --cpus-per-node 1 --mem-per-node 128M|PG_TEST_NUMA_NODES=17|005_many_nodes"
	"2nodes-hugepages-node0|--nodes 2 --cpus-per-node 1 --mem-per-node 1G --hugepages-per-node 128,0|PG_TEST_NUMA_NODES=2 PG_TEST_NUMA_HUGE=short|003_shared_buffers_numa"
)

VM_TIMEOUT=${VM_TIMEOUT:-420}

if ! "$TOP/vm/run-guest" --prepare >"$BUILD/vm-prepare.log" 2>&1; then
	tail -n 5 "$BUILD/vm-prepare.log" >&2
	warn "cannot prepare the QEMU guest (see build/vm-prepare.log): NUMA VM tests NOT RUN"
	exit 77
fi

"$TOP/tools/build.sh"

wanted=("$@")
results=$BUILD/vm-results
rm -rf "$results"
ensure_user_dirs "$results"

vm_share_checkout

failed=()
passed=()
start_all=$(date +%s)
for t in "${TOPOLOGIES[@]}"; do
	IFS='|' read -r name topo envs tests <<<"$t"
	if [ ${#wanted[@]} -gt 0 ] && ! printf '%s\n' "${wanted[@]}" | grep -qx "$name"; then
		continue
	fi
	dir=$results/$name
	ensure_user_dirs "$dir"
	envargs=()
	for e in $envs; do
		envargs+=(--env "$e")
		case $e in PG_TEST_VARIANT=*) build_variant "${e#PG_TEST_VARIANT=}" ;; esac
	done
	step "VM $name: $topo"
	start=$(date +%s)
	rc=0
	# shellcheck disable=SC2086
	"$TOP/vm/run-guest" $topo --timeout "$VM_TIMEOUT" "${VM_SHARE_ARGS[@]}" --share "$dir" "${envargs[@]}" \
		-- "$TOP/tools/vm-numa-tests.sh" "$dir" $tests >"$dir.log" 2>&1 || rc=$?
	grep -E '^# (guest|available|node [0-9]+ (cpus|size))|^/sys.*nr_hugepages|^t/|^Result|^Files' "$dir.log" |
		sed 's/^/    /' || true
	if [ $rc = 0 ] && grep -q '^Result: PASS' "$dir.log"; then
		info "VM $name: passed ($(($(date +%s) - start)) s)"
		passed+=("$name")
	else
		grep -E '^not ok|^#   Failed|^# +(got|expected)' "$dir.log" | head -n 20 | sed 's/^/    /' >&2 || true
		info "VM $name: FAILED (exit status $rc; log: ${dir#$TOP/}.log, TAP logs in ${dir#$TOP/}/)"
		failed+=("$name")
	fi
done

elapsed=$(($(date +%s) - start_all))
if [ ${#failed[@]} -gt 0 ]; then
	echo "vm-check: ${#passed[@]} topologies passed, ${#failed[@]} failed (${failed[*]}) (${elapsed}s)"
	exit 1
fi
echo "vm-check: ${#passed[@]} topologies passed (${passed[*]}) (${elapsed}s)"
