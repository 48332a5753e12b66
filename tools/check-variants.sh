#!/usr/bin/env bash
# tools/check-variants.sh: build the series in other configurations and run
# the suites that matter for them.
#
# Usage: check-variants.sh [VARIANT...]   (default: all)
# Variants:
#   nonuma        built without libnuma: NUMA settings must be refused with a
#                 clear message, everything else must work
#   exec_backend  EXEC_BACKEND (processes re-attach shared memory instead of
#                 inheriting it, as on Windows)
# Each variant has its own build directory (build/variant-NAME); ccache
# cannot share much with the main build, as pg_config.h differs.
. "$(dirname "$0")/lib.sh"

# the options are VARIANT_OPTS of lib.sh
declare -A SUITES
SUITES[nonuma]="setup numa pg_buffercache pg_prewarm pg_test_numa"
SUITES[exec_backend]="setup regress numa pg_buffercache pg_prewarm"

variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(nonuma exec_backend)

ensure_packages "${DEB_PACKAGES[@]}"
"$TOP/tools/tree.sh"

failed=()
for v in "${variants[@]}"; do
	[ -n "${SUITES[$v]:-}" ] || die "unknown variant '$v'" "known: ${!SUITES[*]}"
	step "variant $v"
	bld=$BUILD/variant-$v
	build_variant "$v"
	list=$(mktemp)
	tr ' ' '\n' <<<"${SUITES[$v]}" >"$list"
	if "$TOP/tools/check.sh" "$bld" "$list"; then
		info "variant $v: passed"
	else
		failed+=("$v")
	fi
	rm -f "$list"
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "check-variants: failed: ${failed[*]}"
	exit 1
fi
echo "check-variants: all passed (${variants[*]})"
