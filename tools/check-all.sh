#!/usr/bin/env bash
# tools/check-all.sh: what `make check` (and CI) runs.
#  1. the development build and the suites of tools/check-suites;
#  2. the build without libnuma (tools/check-variants.sh nonuma);
#  3. the NUMA tests in QEMU guests with several nodes (tools/vm-check.sh),
#     or a loud SKIPPED if QEMU or the guest kernel cannot be had.
# Exit status 0 only if nothing failed; the last lines summarise each part.
. "$(dirname "$0")/lib.sh"

summary=()
rc=0
start=$(date +%s)

if out=$("$TOP/tools/check.sh" | tee /dev/stderr | tail -n 1); then
	summary+=("core suites:   ${out#check: }")
else
	summary+=("core suites:   ${out#check: }")
	rc=1
fi

if [ "${SKIP_VARIANTS:-0}" = 1 ]; then
	summary+=("no-libnuma:    SKIPPED (SKIP_VARIANTS=1)")
elif out=$("$TOP/tools/check-variants.sh" nonuma | tee /dev/stderr | grep -E '^check:' | tail -n 1); then
	summary+=("no-libnuma:    ${out#check: }")
else
	summary+=("no-libnuma:    FAILED ${out#check: }")
	rc=1
fi

vm_rc=0
if [ "${SKIP_VM:-0}" = 1 ]; then
	vm_rc=77
	why="SKIP_VM=1"
else
	out=$("$TOP/tools/vm-check.sh" | tee /dev/stderr | tail -n 1) || vm_rc=$?
	why="QEMU or the guest kernel is not available here"
fi
case $vm_rc in
	0) summary+=("NUMA VMs:      ${out#vm-check: }") ;;
	77)
		warn "##################################################################"
		warn "#  NUMA VM TESTS SKIPPED: $why."
		warn "#  Multi-node placement was NOT tested.  Run make vm-check where"
		warn "#  qemu-system-x86 and Debian's kernel package can be installed."
		warn "##################################################################"
		summary+=("NUMA VMs:      SKIPPED ($why)")
		;;
	*)
		summary+=("NUMA VMs:      FAILED: ${out#vm-check: }")
		rc=1
		;;
esac

echo
echo "==> make check summary ($(($(date +%s) - start)) s)"
printf '    %s\n' "${summary[@]}"
[ $rc = 0 ] && echo "check: PASSED" || echo "check: FAILED"
exit $rc
