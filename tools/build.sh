#!/usr/bin/env bash
# tools/build.sh: build and install the series' tree (build/src).
#
# Usage: build.sh [SRCDIR BUILDDIR INSTALLDIR [meson options...]]
# Without arguments: the development build of build/src (debugoptimized,
# cassert, libnuma, liburing, TAP) in build/meson, installed in build/install.
# Builds run as the unprivileged user when we are root, so that the same
# user can later run the tests in the build directory.  Incremental: a
# second run only rebuilds what changed (ninja, ccache).
. "$(dirname "$0")/lib.sh"

if [ $# -ge 3 ]; then
	src=$1 bld=$2 inst=$3
	shift 3
	opts=("$@")
else
	ensure_packages "${DEB_PACKAGES[@]}"
	"$TOP/tools/tree.sh"
	src=$SRC bld=$BUILD/meson inst=$BUILD/install
	opts=("${MESON_DEV_OPTS[@]}")
fi

ensure_user_dirs "$bld" "$inst" "$CCACHE_DIR" "$BUILD/home"

# The ecpg TAP tests (ecpg/001_ecpg_err_warn_msg and its Informix twin) run
# the preprocessor on a file of the source tree and write its output next to
# it; the source tree is root's, the tests run as the unprivileged user.
if is_root && [ -d "$src/src/interfaces/ecpg/preproc/t" ]; then
	chown "$PGUSER_LOCAL" "$src/src/interfaces/ecpg/preproc/t"
fi

# Reconfigure when the options change; set up from scratch when the build
# directory is not a complete meson build (e.g. an interrupted setup).
stamp=$bld/.pgnuma-options
want="${opts[*]} --prefix=$inst src=$src"
if [ ! -f "$bld/build.ninja" ]; then
	step "configuring $(basename "$bld") (meson ${opts[*]})"
	find "$bld" -mindepth 1 -delete
	with_heartbeat configuring "$bld/../$(basename "$bld").setup.log" \
		as_user meson setup "$bld" "$src" --prefix="$inst" "${opts[@]}" ||
		{ tail -n 30 "$bld/../$(basename "$bld").setup.log" >&2; die "meson setup failed" "see $bld/meson-logs/meson-log.txt"; }
elif [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	step "reconfiguring $(basename "$bld") (options changed)"
	as_user meson setup --reconfigure "$bld" "$src" --prefix="$inst" "${opts[@]}" >/dev/null ||
		die "meson reconfigure failed" "see $bld/meson-logs/meson-log.txt"
fi
echo "$want" | as_user tee "$stamp" >/dev/null

step "compiling in $(basename "$bld") (ninja; ccache in ${CCACHE_DIR#$TOP/})"
run_ninja compiling "$bld/ninja.log" -C "$bld" ||
	{ grep -E -A5 'error|FAILED' "$bld/ninja.log" | head -n 60 >&2; die "compilation failed" "full log: $bld/ninja.log"; }
grep -E 'warning:' "$bld/ninja.log" | sort -u | head -n 20 >&2 || true

as_user meson install -C "$bld" --quiet --only-changed >"$bld/install.log" 2>&1 ||
	{ tail -n 20 "$bld/install.log" >&2; die "meson install failed"; }
info "installed in ${inst#$TOP/}"
