#!/usr/bin/env bash
# tools/check-all.sh: what `make check` (and CI) runs.
#  1. the development build and the suites of tools/check-suites;
#  2. the builds without libnuma and with EXEC_BACKEND (tools/check-variants.sh);
#  3. the NUMA tests in QEMU guests with several nodes (tools/vm-check.sh),
#     or a loud SKIPPED if QEMU or the guest kernel cannot be had;
#  4. the extension ABI against stock 18.6 (tools/abi-check.sh).
# Exit status 0 only if nothing failed; the last lines summarise each part.
. "$(dirname "$0")/lib.sh"

summary=()
ran=()
times=()
rc=0
start=$(date +%s)
mkdir -p "$BUILD"

# Runs a part, showing its output and keeping it in build/check-NAME.log
# (not "tee /dev/stderr": that truncates stderr when it is a regular file).
# Sets part_rc and part_last (the part's last line); the summary says how
# long each part took, so that a CI log tells where its time went.
run_part() {
	local name=$1 t0=$SECONDS
	shift
	ran+=("$name")
	set +e
	"$@" 2>&1 | tee "$BUILD/check-$name.log"
	part_rc=${PIPESTATUS[0]}
	set -e
	part_last=$(tail -n 1 "$BUILD/check-$name.log")
	times+=("$name $((SECONDS - t0)) s")
}

run_part core "$TOP/tools/check.sh"
summary+=("$(printf '%-14s' core:) ${part_last#check: }")
[ $part_rc = 0 ] || rc=1

for v in nonuma exec_backend; do
	label=$(printf '%-14s' "$v:")
	if [ "${SKIP_VARIANTS:-0}" = 1 ]; then
		summary+=("$label SKIPPED (SKIP_VARIANTS=1)")
		continue
	fi
	run_part "$v" "$TOP/tools/check-variants.sh" "$v"
	last_check=$(grep -E '^check:' "$BUILD/check-$v.log" | tail -n 1 || true)
	if [ $part_rc = 0 ]; then
		summary+=("$label ${last_check#check: }")
	else
		summary+=("$label FAILED ${last_check#check: }")
		rc=1
	fi
done

if [ "${SKIP_VM:-0}" = 1 ]; then
	part_rc=77
	why="SKIP_VM=1"
else
	run_part vm "$TOP/tools/vm-check.sh"
	why="QEMU or the guest kernel is not available here"
fi
case $part_rc in
	0) summary+=("$(printf '%-14s' 'NUMA VMs:') ${part_last#vm-check: }") ;;
	77)
		warn "##################################################################"
		warn "#  NUMA VM TESTS SKIPPED: $why."
		warn "#  Multi-node placement was NOT tested.  Run make vm-check where"
		warn "#  qemu-system-x86 and Debian's kernel package can be installed."
		warn "##################################################################"
		summary+=("$(printf '%-14s' 'NUMA VMs:') SKIPPED ($why)")
		;;
	*)
		summary+=("$(printf '%-14s' 'NUMA VMs:') FAILED: ${part_last#vm-check: }")
		rc=1
		;;
esac

if [ "${SKIP_ABI:-0}" = 1 ]; then
	summary+=("$(printf '%-14s' 'ABI:') SKIPPED (SKIP_ABI=1)")
else
	run_part abi "$TOP/tools/abi-check.sh"
	summary+=("$(printf '%-14s' 'ABI:') ${part_last#abi-check: }")
	[ $part_rc = 0 ] || rc=1
fi

echo
echo "==> make check summary ($(fmt_duration $(($(date +%s) - start))))"
printf '    %s\n' "${summary[@]}"
echo "    time per part: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g')"
# A CI log is often read from its tail only: name what failed here too.
if [ $rc != 0 ]; then
	for part in "${ran[@]}"; do
		grep -E '^ *(not ok|#   Failed test|# +(got|expected))| (FAIL|ERROR) +[0-9.]+s|: (TIMED OUT|FAILED in|still running when|was running when)' "$BUILD/check-$part.log" |
			head -n 8 | sed "s/^ */    $part: /" || true
	done
fi
[ $rc = 0 ] && echo "check: PASSED" || echo "check: FAILED"
exit $rc
