#!/usr/bin/env bash
# tools/check.sh: build the series and run the test suites listed in
# tools/check-suites, as the unprivileged user.
#
# Usage: check.sh [BUILDDIR [SUITES-FILE | all]]
# "all" runs every test of the tree (tools/check-world.sh).
# The exit status is the truth; the last line gives the counts.
. "$(dirname "$0")/lib.sh"

bld=${1:-$BUILD/meson}
suites_file=${2:-$TOP/tools/check-suites}
[ $# -ge 1 ] || "$TOP/tools/build.sh"

args=()
if [ "$suites_file" = all ]; then
	suites=(all)
else
	mapfile -t suites < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$suites_file")
	available=$(meson_suites "$bld")
	for s in "${suites[@]}"; do
		grep -qx -- "$s" <<<"$available" ||
			die "test suite '$s' (listed in ${suites_file#$TOP/}) does not exist in this tree"
		args+=(--suite "$s")
	done
fi

# The SGML documentation must be valid (xmllint --valid, as the docs build
# does), where the build has docs enabled.
if grep -q '^build doc/src/sgml/postgres-full.xml' "$bld/build.ninja"; then
	step "validating the documentation (SGML)"
	run_ninja validating "$bld.docs.log" -C "$bld" doc/src/sgml/postgres-full.xml ||
		{ grep -iE 'error' "$bld.docs.log" | head -n 20 >&2; echo "check: 0 passed, 1 failed, 0 skipped (invalid documentation)"; exit 1; }
fi

step "running test suites: ${suites[*]}"
start=$(date +%s)
set +e
as_user meson test -C "$bld" --num-processes "${TEST_JOBS:-$(nproc)}" --print-errorlogs \
	--timeout-multiplier "${TEST_TIMEOUT_MULTIPLIER:-1}" \
	--no-rebuild "${args[@]}" 2>&1 | tee "$bld.check.log" | grep -E --line-buffered '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout|Expected Fail|Unexpected Pass):'
rc=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))

count() { sed -n "s/^$1: *\([0-9]*\) *\$/\1/p" "$bld.check.log" | tail -n 1; }
ok=$(count Ok) fail=$(count Fail) skip=$(count Skipped) tmo=$(count Timeout) xpass=$(count 'Unexpected Pass')
: "${ok:=0}" "${fail:=0}" "${skip:=0}" "${tmo:=0}" "${xpass:=0}"
failed=$((fail + tmo + xpass))
if [ "$rc" = 0 ] && ! grep -qE '^Ok: *[0-9]+' "$bld.check.log"; then
	info "meson test ended without its summary (see $bld.check.log)"
	rc=1
fi

if [ "$rc" != 0 ] || [ "$failed" != 0 ]; then
	grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$bld.check.log" >&2 || true
	info "logs: $bld/meson-logs/testlog.txt and $bld/testrun/<suite>/<test>/"
	[ "$failed" != 0 ] || failed=1
	echo "check: $ok passed, $failed failed, $skip skipped (${elapsed}s)"
	exit 1
fi
echo "check: $ok passed, 0 failed, $skip skipped (${elapsed}s)"
