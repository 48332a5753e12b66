#!/usr/bin/env bash
# tools/check-series.sh: build every prefix of the series and smoke-test it,
# so that a patch that only works together with a later one is caught.
#
# Uses a separate worktree (build/series/src) and build directory
# (build/series/meson) so that the development build is left alone; ccache
# and incremental builds keep each step short.  The smoke test runs the
# suites of tools/check-series-suites that exist at that prefix.
. "$(dirname "$0")/lib.sh"

ensure_packages "${DEB_PACKAGES[@]}"
"$TOP/tools/tree.sh"

WT=$BUILD/series/src
root=$(pristine_commit)
mapfile -t commits < <(git -C "$SRC" rev-list --reverse "$root"..HEAD)
[ ${#commits[@]} -gt 0 ] || die "the series is empty"

# (Re)create the worktree if it is missing or belongs to an older build/src.
if ! git -C "$WT" rev-parse --git-dir >/dev/null 2>&1 ||
	[ "$(git -C "$WT" rev-list --max-parents=0 HEAD 2>/dev/null | tail -n 1)" != "$root" ]; then
	rm -rf "$WT"
	git -C "$SRC" worktree prune
	mkdir -p "$BUILD/series"
	git -C "$SRC" worktree add -q --detach "$WT" "$root"
fi

mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/tools/check-series-suites")
start=$(date +%s)
n=0
for c in "${commits[@]}"; do
	n=$((n + 1))
	subject=$(git -C "$SRC" log -1 --format=%s "$c")
	step "[$n/${#commits[@]}] $subject"
	git -C "$WT" checkout -q --detach "$c"
	"$TOP/tools/build.sh" "$WT" "$BUILD/series/meson" "$BUILD/series/install" "${MESON_DEV_OPTS[@]}" ||
		die "prefix $n ($subject) does not build"
	# Suites that exist at this prefix (a later patch may add one).
	list=$(mktemp)
	for s in "${wanted[@]}"; do echo "$s"; done >"$list"
	grep -Fx -f <(meson_suites "$BUILD/series/meson") "$list" >"$list.have" || true
	"$TOP/tools/check.sh" "$BUILD/series/meson" "$list.have" ||
		{ rm -f "$list" "$list.have"; die "prefix $n ($subject) fails its smoke test" "logs: $BUILD/series/meson/meson-logs/testlog.txt"; }
	rm -f "$list" "$list.have"
done
echo "check-series: all ${#commits[@]} prefixes build and pass their smoke tests ($(($(date +%s) - start))s)"
