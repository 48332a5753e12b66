#!/usr/bin/env bash
# tools/abi-check.sh: compare the ABI of the series' postgres binary with
# that of stock PostgreSQL 18.6, as PostgreSQL's own checks for minor releases
# do: abidiff (Debian's abigail-tools) on the DWARF of both binaries.
#
# An extension built against stock 18.x must keep working with the series:
# the layout of the structures it may see (BufferDesc above all, whose
# content_lock BufferDescriptorGetContentLock() reads inline) and the
# functions it may call must not change.  Every difference is listed; the
# ones the series intends are in tools/abi-expected.txt (see README.md), and
# anything else fails the check.
#
# Both are built the same way, without cassert as distributions ship them but
# without optimization (-O0 -g: the layouts and signatures are the same as in
# an optimized build, the DWARF is complete, and it compiles in a fraction of
# the time), from one worktree of build/src (build/abi/src), only what goes
# into the postgres binary and only the objects compared.
#
# abidw 2.2 (Debian 12) cannot be run on the whole binary: in C it keeps one
# of the several DWARF entries a function has (its declarations in the units
# that call it, its definition) and often keeps a declaration, which has no
# ELF symbol, so a third of the exported functions, StrategyGetBuffer among
# them, are left out and their changes go unseen.  So the check compares the
# object files instead, each with the one in the other build: every object
# of the postgres binary (the backend and the server's libpgport and
# libpgcommon) that depends, by ninja's dependency records of the series'
# build, on a file the series changes.  An object depends on the headers
# whose types it sees, so a changed layout shows in each of them.  The global
# symbols those objects define are compared as well (nm), for what abidiff
# does not show: a function that is gone, or moved to another file; the
# other objects are the same source in both builds.
#
# Usage: abi-check.sh            compare HEAD of build/src with its root commit
#        ABI_COMMIT=C abi-check.sh   compare commit C of build/src instead
# Output: build/abi/abidiff.txt (the full report), and a summary.
. "$(dirname "$0")/lib.sh"

ABI=$BUILD/abi
WT=$ABI/src
EXPECTED=$TOP/tools/abi-expected.txt
MESON_ABI_OPTS=(
	--buildtype=debug -Dcassert=false
	-Dlibnuma=enabled -Dliburing=enabled -Dtap_tests=disabled -Ddocs=disabled
	-Dplperl=disabled -Dplpython=disabled -Dpltcl=disabled
	-Dnls=disabled -Dllvm=disabled
)
# the static libraries the postgres binary is linked from
POSTGRES_LIBS=(src/backend/postgres_lib.a src/port/libpgport_srv.a src/common/libpgcommon_srv.a)

ensure_packages "${DEB_PACKAGES[@]}" abigail-tools
"$TOP/tools/tree.sh"

root=$(pristine_commit)
head=$(git -C "$SRC" rev-parse "${ABI_COMMIT:-HEAD}")
if ! git -C "$WT" rev-parse --git-dir >/dev/null 2>&1; then
	rm -rf "$WT"
	git -C "$SRC" worktree prune
	mkdir -p "$ABI"
	git -C "$SRC" worktree add -q --detach "$WT" "$root"
fi
ensure_user_dirs "$ABI/stock" "$ABI/series" "$CCACHE_DIR" "$BUILD/home"

# Configures build/abi/$1 and checks out commit $2 in the worktree.
setup_build() {
	local name=$1 commit=$2 bld=$ABI/$1
	step "ABI: building $name ($(git -C "$SRC" log -1 --format=%s "$commit"))"
	git -C "$WT" checkout -q --detach -f "$commit"
	if [ ! -f "$bld/build.ninja" ] || [ "$(cat "$bld/.pgnuma-abi-options" 2>/dev/null)" != "${MESON_ABI_OPTS[*]}" ]; then
		rm -rf "$bld"
		ensure_user_dirs "$bld"
		with_heartbeat "configuring $name" "$ABI/$name.setup.log" as_user meson setup "$bld" "$WT" "${MESON_ABI_OPTS[@]}" ||
			{ tail -n 20 "$ABI/$name.setup.log" >&2; die "meson setup failed for $name"; }
		echo "${MESON_ABI_OPTS[*]}" | as_user tee "$bld/.pgnuma-abi-options" >/dev/null
	fi
}

# Builds targets $2... in build/abi/$1.
build_targets() {
	local name=$1
	shift
	run_ninja "building $name" "$ABI/$name.ninja.log" -C "$ABI/$name" "$@" ||
		{ grep -E -A5 'error|FAILED' "$ABI/$name.ninja.log" | head -n 40 >&2; die "$name does not build"; }
}

# The series first, all of the postgres binary's objects (not linked), for
# ninja's record of what each depends on.
setup_build series "$head"
build_targets series "${POSTGRES_LIBS[@]}"

# Its objects that depend on a file the series changes.  A source file the
# series deletes would have no object here; it deletes none, and the check
# says so if that changes rather than miss what went with it.
deleted=$(git -C "$SRC" diff --name-only --diff-filter=D "$root" "$head" -- 'src/backend/*.c' 'src/port/*.c' 'src/common/*.c')
[ -z "$deleted" ] || die "the series deletes source files of postgres, which this check does not compare: $deleted"
mapfile -t changed < <(git -C "$SRC" diff --name-only "$root" "$head" | sed 's|^|../src/|')
lib_objects='^src/(backend/postgres_lib|port/libpgport_srv|common/libpgcommon_srv)\.a\.p/'
mapfile -t objects < <(
	as_user ninja -C "$ABI/series" -t deps |
		awk -v files="$(printf '%s\n' "${changed[@]}")" -v libs="$lib_objects" '
			BEGIN { n = split(files, f, "\n"); for (i = 1; i <= n; i++) if (f[i] != "") want[f[i]] = 1 }
			/^[^ ]/ { obj = $1; sub(/:$/, "", obj); next }
			/^    / { d = $1; if ((d in want) && obj ~ libs) print obj }' |
		sort -u
)
[ ${#objects[@]} -gt 0 ] || die "no object of postgres depends on the series' changes (ninja -t deps of build/abi/series is empty?)"

# Stock: the same objects, where stock has them, and nothing else.
setup_build stock "$root"
mapfile -t stock_objects < <(
	as_user ninja -C "$ABI/stock" -t targets all | sed -n 's/^\([^:]*\.o\): .*/\1/p' | grep -E "$lib_objects" |
		grep -xF -f <(printf '%s\n' "${objects[@]}") || true
)
build_targets stock "${stock_objects[@]}"

step "ABI: abidiff of ${#objects[@]} objects that depend on files the series changes"
report=$ABI/abidiff.txt
: >"$report"

# One object: abidw of both builds' object, then abidiff, its output and
# status in $ABI/objects/diff/NAME.{out,rc}.  Run as many at once as there
# are CPUs: abidw is single-threaded, and this is most of the check's time.
compare_object() {
	local obj=$1 name=${1##*/}
	local new_abi=$ABI/objects/series/$name.abi old_abi=$ABI/objects/stock/$name.abi
	local out_file=$ABI/objects/diff/$name
	if ! abidw --out-file "$new_abi" "$ABI/series/$obj" ||
		! abidw --out-file "$old_abi" "$ABI/stock/$obj"; then
		echo "abidw failed on $obj" >"$out_file.out"
		echo 255 >"$out_file.rc"
		return
	fi
	local rc=0
	abidiff --no-unreferenced-symbols "$old_abi" "$new_abi" >"$out_file.out" 2>&1 || rc=$?
	echo "$rc" >"$out_file.rc"
}
rm -rf "$ABI/objects"
mkdir -p "$ABI/objects/series" "$ABI/objects/stock" "$ABI/objects/diff"
compared=()
done_objects=0 last_shown=$SECONDS
for obj in "${objects[@]}"; do
	done_objects=$((done_objects + 1))
	if [ $((SECONDS - last_shown)) -ge "$(progress_interval)" ]; then
		last_shown=$SECONDS
		progress_line "abidiff: $done_objects of ${#objects[@]} objects"
	fi
	# a new file only adds functions, which breaks nothing
	[ -f "$ABI/stock/$obj" ] || continue
	compared+=("$obj")
	compare_object "$obj" &
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
done
wait
progress_done
for obj in "${compared[@]}"; do
	out_file=$ABI/objects/diff/${obj##*/}
	rc=$(cat "$out_file.rc" 2>/dev/null || echo 255)
	[ $((rc & 3)) = 0 ] || { cat "$out_file.out" >&2; die "abidiff failed on $obj (status $rc)"; }
	[ "$rc" = 0 ] || printf '=== %s\n%s\n\n' "$obj" "$(cat "$out_file.out")" >>"$report"
done

# Global symbols defined by the compared objects ("-" gone, "+" new).
global_symbols() {
	local bld=$1
	shift
	(cd "$bld" && for o in "$@"; do [ -f "$o" ] && echo "$o"; done | xargs -r nm -g --defined-only) |
		awk 'NF == 3 { print $3 }' | sort -u
}
diff <(global_symbols "$ABI/stock" "${stock_objects[@]}") <(global_symbols "$ABI/series" "${objects[@]}") |
	sed -n 's/^< /-/p; s/^> /+/p' >"$ABI/symbols.diff" || true
info "full report: ${report#$TOP/}, exported symbols: ${ABI#$TOP/}/symbols.diff"

# The differences that can break an extension built against stock: every
# changed or removed function or variable, every type that changed, and
# every exported symbol that is gone, one per line ("kind name").  Added
# functions and variables break nothing; they are counted, not listed.
mapfile -t found < <(
	{
		# "  [C] 'function void Foo(int)' at file.c:12:1 has some indirect sub-type changes:"
		sed -n "s/^  \[\([CD]\)\] 'function [^']*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1 function \2/p" "$report"
		sed -n "s/^  \[\([CD]\)\] '\([^'(]*[ *]\)\?\([A-Za-z_][A-Za-z0-9_]*\)\(\[\]\)\?' .*/\1 variable \3/p" "$report"
		sed -n 's/^-\(.*\)/D symbol \1/p' "$ABI/symbols.diff"
		# "underlying type 'struct BufferDesc' at buf_internals.h:258:1 changed:"
		grep -oE "'(struct|union|enum) [A-Za-z_][A-Za-z0-9_]*'( at [^ ]*)? changed" "$report" |
			sed -E "s/^'(struct|union|enum) ([A-Za-z_][A-Za-z0-9_]*).*/T \1 \2/" || true
	} | sort -u
)

mapfile -t expected < <(grep -vE '^\s*(#|$)' "$EXPECTED" | sed -E 's/\s+#.*//; s/\s+$//' | sort -u)

unexpected=()
for d in "${found[@]}"; do
	printf '%s\n' "${expected[@]}" | grep -qxF -- "$d" || unexpected+=("$d")
done
gone=()
for e in "${expected[@]}"; do
	printf '%s\n' "${found[@]}" | grep -qxF -- "$e" || gone+=("$e")
done

added=$(grep -c '^+' "$ABI/symbols.diff" || true)
echo "    differences (C changed, D deleted, T type changed); $added exported symbols added:"
for d in "${found[@]}"; do
	if printf '%s\n' "${unexpected[@]}" | grep -qxF -- "$d"; then
		echo "      $d    <-- NOT EXPECTED"
	else
		echo "      $d"
	fi
done
for e in "${gone[@]}"; do
	info "listed in tools/abi-expected.txt but no longer found: $e"
done

if [ ${#unexpected[@]} -gt 0 ]; then
	echo "abi-check: FAILED: ${#unexpected[@]} unexpected difference(s) (see ${report#$TOP/}; intended ones go in tools/abi-expected.txt)"
	exit 1
fi
echo "abi-check: passed (${#found[@]} differences, all expected)"
