# tools/lib.sh: settings and helpers shared by the scripts behind the Makefile.
# Sourced, never run.  Every path is absolute so that scripts may cd freely.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
PATCHES=$TOP/patches
SRC=$BUILD/src

# The base: PostgreSQL 18.6 as packaged by Debian (orig tarball of postgresql-18).
PG_DEB_PACKAGE=postgresql-18
PG_DEB_VERSION=18.6-3
PG_UPSTREAM_VERSION=18.6
PG_ORIG_SHA256=555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5fa881d9f

# The series' version, used in the subject prefix of exported patches.
SERIES_VERSION=$(cat "$TOP/tools/series-version")

# Identity used for commits made by the tooling in build/src, so that the tree
# (and hence every commit hash in it) is the same each time it is recreated.
GIT_IDENT_NAME="NUMA buffers series"
GIT_IDENT_EMAIL="numa-buffers@localhost"
PRISTINE_DATE="2026-01-01T00:00:00Z"

# The unprivileged user that builds and tests when we are root: initdb and
# postgres refuse to run as root.
PGUSER_LOCAL=${PGUSER_LOCAL:-pgnuma}

# Ports: one for the demo cluster, away from the default 5432.
DEMO_PORT=${DEMO_PORT:-55432}

# Meson options of the development build (demo, check).  Procedural
# languages and NLS are off: nothing in the series touches them and they
# cost build time.  Docs are enabled so that `make check` can validate the
# SGML (they are not built by default).  Injection points are enabled in the
# development build and its variants (not in the ABI check's or the
# benchmark's builds, which are built as distributions ship PostgreSQL):
# the series' tests hold sessions at them.
MESON_COMMON_OPTS=(
	-Dlibnuma=enabled -Dliburing=enabled -Dtap_tests=enabled
	-Dplperl=disabled -Dplpython=disabled -Dpltcl=disabled
	-Ddocs=enabled -Dnls=disabled -Dllvm=disabled
)
MESON_DEV_OPTS=(--buildtype=debugoptimized -Dcassert=true -Dinjection_points=true "${MESON_COMMON_OPTS[@]}")

# The build variants (tools/check-variants.sh; tools/vm-check.sh runs the
# NUMA tests of exec_backend in a guest too): the development build's
# options, without docs (validated there already).  Each has its own build
# directory, build/variant-NAME, installed into build/variant-NAME-install.
declare -A VARIANT_OPTS
_variant_base=("${MESON_DEV_OPTS[@]/-Ddocs=enabled/-Ddocs=disabled}")
# Each changes pg_config.h or postgres.h, so ccache serves nothing of another
# build and a variant compiles everything on a cold cache (a fresh CI
# machine).  Built without optimization, they compile in about half the
# time, and what they test (the port layer's fallbacks without libnuma;
# re-attaching shared memory and placement in child processes) does not
# depend on the optimizer, which the development build exercises.
_variant_base=("${_variant_base[@]/--buildtype=debugoptimized/--buildtype=debug}")
VARIANT_OPTS[nonuma]="${_variant_base[*]/-Dlibnuma=enabled/-Dlibnuma=disabled}"
VARIANT_OPTS[exec_backend]="${_variant_base[*]} -Dc_args=-DEXEC_BACKEND"

# Builds and installs variant $1.
build_variant() {
	local bld=$BUILD/variant-$1
	[ -n "${VARIANT_OPTS[$1]:-}" ] || die "unknown variant '$1'" "known: ${!VARIANT_OPTS[*]}"
	# shellcheck disable=SC2086
	"$TOP/tools/build.sh" "$SRC" "$bld" "$bld-install" ${VARIANT_OPTS[$1]}
}

# Debian packages the tooling needs (the build, the tests, the demo).
DEB_PACKAGES=(
	meson ninja-build ccache gcc make bison flex perl pkg-config
	libreadline-dev zlib1g-dev libicu-dev libnuma-dev liburing-dev
	libipc-run-perl numactl git xz-utils bzip2 ca-certificates
	libxml2-utils xsltproc docbook-xml
)

# A PATH without root's pyenv: its python3 lives in /root, which the
# unprivileged user cannot execute, and meson records the interpreter.
SAFE_PATH=/usr/lib/ccache:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH=$SAFE_PATH:$PATH

# ccache: relative paths and no working-directory hashing, so that the
# builds of check-series (another directory) hit the development build's
# cache, and so do those of another checkout.  The cache is kept outside the
# checkout, as PostgreSQL's CI and buildfarm animals keep theirs between runs:
# a fresh clone (CI) compiles only what changed since the last build on the
# machine.  An object is found by a hash of its source, the headers it
# includes and its compiler options, so an old cache cannot change what is
# built, only how fast.  CCACHE_DIR chooses another place.
if [ "$(id -u)" = 0 ]; then
	_ccache_default=/var/cache/numa-buffers/ccache
else
	_ccache_default=${XDG_CACHE_HOME:-$HOME/.cache}/numa-buffers/ccache
fi
export CCACHE_DIR=${CCACHE_DIR:-$_ccache_default}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export CCACHE_BASEDIR=$BUILD
export CCACHE_NOHASHDIR=true

if [ -t 1 ]; then
	_bold=$(printf '\033[1m'); _red=$(printf '\033[31m'); _yellow=$(printf '\033[33m'); _off=$(printf '\033[0m')
else
	_bold= _red= _yellow= _off=
fi

step() { printf '%s==> %s%s\n' "$_bold" "$*" "$_off"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '%s*** WARNING: %s%s\n' "$_yellow" "$*" "$_off" >&2; }
die() {
	printf '%s*** ERROR: %s%s\n' "$_red" "$1" "$_off" >&2
	shift
	for line in "$@"; do printf '    %s\n' "$line" >&2; done
	exit 1
}

is_root() { [ "$(id -u)" = 0 ]; }

# Run a command as the unprivileged user (or as ourselves if we are not root),
# with a PATH that has no root-only interpreters in it.
as_user() {
	if is_root; then
		runuser -u "$PGUSER_LOCAL" -- env PATH="$SAFE_PATH" HOME="$BUILD/home" \
			CCACHE_DIR="$CCACHE_DIR" CCACHE_MAXSIZE="$CCACHE_MAXSIZE" CCACHE_BASEDIR="$CCACHE_BASEDIR" \
			CCACHE_NOHASHDIR="$CCACHE_NOHASHDIR" "$@"
	else
		"$@"
	fi
}

# Create the unprivileged user if needed and give it the directories it writes.
ensure_user_dirs() {
	mkdir -p "$@"
	if is_root; then
		if ! id "$PGUSER_LOCAL" >/dev/null 2>&1; then
			step "creating unprivileged user '$PGUSER_LOCAL' (initdb and postgres refuse root)"
			useradd --system --no-create-home --shell /bin/bash "$PGUSER_LOCAL"
		fi
		chown -R "$PGUSER_LOCAL:" "$@"
		# the user must be able to reach BUILD from /
		local d=$BUILD
		while [ "$d" != / ]; do
			chmod o+x "$d" 2>/dev/null || true
			d=$(dirname "$d")
		done
	fi
}

# Install missing Debian packages (as root); without root, say what is missing.
ensure_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	if ! is_root; then
		die "missing Debian packages: ${missing[*]}" "install them (as root): apt-get install ${missing[*]}"
	fi
	step "installing Debian packages: ${missing[*]}"
	mkdir -p "$BUILD"
	with_heartbeat "apt-get update" "$BUILD/apt.log" apt-get update -qq ||
		die "apt-get update failed" "$(tail -n 3 "$BUILD/apt.log")" "check the network access to Debian's registry"
	with_heartbeat "apt-get install" "$BUILD/apt.log" \
		env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" ||
		die "apt-get install failed for: ${missing[*]}" "$(tail -n 5 "$BUILD/apt.log")"
}

# The ordered list of patch files of the series (cover letter excluded).
series_patches() {
	ls "$PATCHES"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null | grep -v '/0000-cover-letter.patch$' | sort
}

# The meson test suites a build directory has, one per line.
meson_suites() {
	as_user meson test -C "$1" --no-rebuild --list 2>/dev/null |
		sed -n 's|^[^:]*:\([^ ]*\) / .*|\1|p' | sort -u
}

# Commit of build/src holding the pristine upstream tree (its root commit).
pristine_commit() {
	git -C "$SRC" rev-list --max-parents=0 HEAD | tail -n 1
}

# run-guest options that make this checkout visible in a QEMU guest: the
# guest hides the host's /tmp (and /run, /var/tmp, /dev/shm) under tmpfs, so
# a checkout there must be shared explicitly.  Sets the array VM_SHARE_ARGS.
vm_share_checkout() {
	case $TOP/ in
		/tmp/* | /run/* | /var/tmp/* | /dev/shm/*) VM_SHARE_ARGS=(--share "$TOP") ;;
		*) VM_SHARE_ARGS=() ;;
	esac
}

# numamem_prepare TOOL DIR: build the numamem plugin and prepare a guest for
# the locality tools (vm/locality.sh, vm/dsm-locality.sh), logs in DIR;
# exits 77, a skip, where either cannot be done here.
numamem_prepare() {
	local tool=$1 out=$2 rc=0
	mkdir -p "$out"
	"$TOP/vm/numamem/build" >"$out/numamem-build.log" 2>&1 || rc=$?
	if [ $rc = 77 ]; then
		echo "$tool: SKIPPED (the numamem plugin cannot be built here, see $out/numamem-build.log)"
		exit 77
	fi
	[ $rc = 0 ] || die "vm/numamem/build failed" "see $out/numamem-build.log"
	if ! "$TOP/vm/run-guest" --prepare >"$out/prepare.log" 2>&1; then
		echo "$tool: SKIPPED (vm/run-guest cannot prepare a guest, see $out/prepare.log)"
		exit 77
	fi
}

# fmt_duration SECONDS: "42 s", "7m05s" or "1h02m05s".
fmt_duration() {
	if [ "$1" -lt 60 ]; then
		printf '%d s' "$1"
	elif [ "$1" -lt 3600 ]; then
		printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
	else
		printf '%dh%02dm%02ds' $(($1 / 3600)) $(($1 % 3600 / 60)) $(($1 % 60))
	fi
}

# How often a long step says how far it is, in a log (CI): every
# PROGRESS_INTERVAL seconds (default 15).  On a terminal, one line is
# updated in place every second instead.
[[ ${PROGRESS_INTERVAL:-15} =~ ^[1-9][0-9]*$ ]] ||
	die "PROGRESS_INTERVAL must be a whole number of seconds, not '$PROGRESS_INTERVAL'"
progress_interval() {
	if [ -t 1 ]; then echo 1; else echo "${PROGRESS_INTERVAL:-15}"; fi
}

# progress_line TEXT: show TEXT as the current progress of a step: on a
# terminal in place of the previous one, in a log as a line of its own.
# progress_done clears a terminal's progress line.
progress_line() {
	if [ -t 1 ]; then printf '\r\033[K    %s' "$*"; else printf '    %s\n' "$*"; fi
}
progress_done() {
	[ ! -t 1 ] || printf '\r\033[K'
}

# show_progress WHAT: read ninja's output (its "[n/N] ..." lines) on stdin
# and show how far it is, so that a long build does not look like a hang:
# the first step at once, then at most one line per progress_interval.
# Other lines are not shown (the caller keeps the whole output in a log).
show_progress() {
	local what=$1 line pct now last=-1 shown=0 interval start=$SECONDS
	interval=$(progress_interval)
	while IFS= read -r line; do
		[[ $line =~ ^\[([0-9]+)/([0-9]+)\]\  ]] || continue
		now=$SECONDS
		[ $last -lt 0 ] || [ $((now - last)) -ge "$interval" ] || continue
		last=$now
		pct=$((100 * BASH_REMATCH[1] / BASH_REMATCH[2]))
		progress_line "$(printf '%s: [%d/%d] %3d%%, %s' "$what" "${BASH_REMATCH[1]}" \
			"${BASH_REMATCH[2]}" "$pct" "$(fmt_duration $((now - start)))")"
		shown=1
	done
	[ $shown = 0 ] || progress_done
}

# run_ninja WHAT LOG NINJA-ARGS...: ninja as the unprivileged user, its whole
# output in LOG, its progress on stdout (show_progress), then how long it
# took.  Returns ninja's exit status.  NINJA_STATUS is set to the default
# format, which show_progress reads, whatever the user's environment says.
run_ninja() {
	local what=$1 log=$2 start=$SECONDS rc
	local -
	shift 2
	set +e
	as_user env NINJA_STATUS='[%f/%t] ' ninja "$@" 2>&1 | tee "$log" | show_progress "$what"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ]; then
		if grep -q '^ninja: no work to do' "$log"; then
			info "$what: up to date"
		else
			info "$what: done in $(fmt_duration $((SECONDS - start)))"
		fi
	fi
	return "$rc"
}

# with_heartbeat WHAT LOG COMMAND...: run COMMAND with its output in LOG,
# saying every progress_interval that it is still running (the last line of
# its log with it), then how long it took; for steps that print no progress
# of their own (package installs, downloads, meson setup).  Returns
# COMMAND's exit status.
with_heartbeat() {
	local what=$1 log=$2 pid rc=0 start=$SECONDS last=$SECONDS interval shown=0 tail
	shift 2
	interval=$(progress_interval)
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		[ $((SECONDS - last)) -ge "$interval" ] || continue
		last=$SECONDS
		tail=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r' | cut -c1-60)
		progress_line "$what: still running, $(fmt_duration $((SECONDS - start)))${tail:+ (last: $tail)}"
		shown=1
	done
	wait "$pid" || rc=$?
	[ $shown = 0 ] || progress_done
	[ $rc != 0 ] || info "$what: done in $(fmt_duration $((SECONDS - start)))"
	return $rc
}
