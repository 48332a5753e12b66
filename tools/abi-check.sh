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
# Both binaries are built the same way (debugoptimized, no cassert, as
# distributions ship them) from one worktree of build/src (build/abi/src),
# only the backend, so that ccache serves the second build.
#
# abidw 2.2 (Debian 12) cannot be run on the whole binary: in C it keeps one
# of the several DWARF entries a function has (its declarations in the units
# that call it, its definition) and often keeps a declaration, which has no
# ELF symbol, so a third of the exported functions, StrategyGetBuffer among
# them, are left out and their changes go unseen.  So the check compares the
# object files instead, each with the one in the other build: every object
# that depends (by ninja's dependency records) on a file the series changes.
# An object depends on the headers whose types it sees, so a changed layout
# shows in each of them.  The exported symbols of the two binaries are
# compared as well (nm), for what no object shows: a function that is gone.
#
# Usage: abi-check.sh            compare HEAD of build/src with its root commit
#        ABI_COMMIT=C abi-check.sh   compare commit C of build/src instead
# Output: build/abi/abidiff.txt (the full report), and a summary.
. "$(dirname "$0")/lib.sh"

ABI=$BUILD/abi
WT=$ABI/src
EXPECTED=$TOP/tools/abi-expected.txt
MESON_ABI_OPTS=(
	--buildtype=debugoptimized -Dcassert=false
	-Dlibnuma=enabled -Dliburing=enabled -Dtap_tests=disabled -Ddocs=disabled
	-Dplperl=disabled -Dplpython=disabled -Dpltcl=disabled
	-Dnls=disabled -Dllvm=disabled
	# libabigail 2.2 cannot tie a function whose code gcc splits into hot
	# and cold parts (DW_AT_ranges, no DW_AT_low_pc) to its ELF symbol, and
	# leaves it out of the ABI: a third of the exported functions,
	# StrategyGetBuffer among them.  Not splitting changes no ABI.
	-Dc_args=-fno-reorder-blocks-and-partition
)

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

# Builds the postgres binary of commit $2 in build/abi/$1.
build_postgres() {
	local name=$1 commit=$2 bld=$ABI/$1
	step "ABI: building postgres of $name ($(git -C "$SRC" log -1 --format=%s "$commit"))"
	git -C "$WT" checkout -q --detach -f "$commit"
	if [ ! -f "$bld/build.ninja" ] || [ "$(cat "$bld/.pgnuma-abi-options" 2>/dev/null)" != "${MESON_ABI_OPTS[*]}" ]; then
		rm -rf "$bld"
		ensure_user_dirs "$bld"
		with_heartbeat "configuring $name" "$ABI/$name.setup.log" as_user meson setup "$bld" "$WT" "${MESON_ABI_OPTS[@]}" ||
			{ tail -n 20 "$ABI/$name.setup.log" >&2; die "meson setup failed for $name"; }
		echo "${MESON_ABI_OPTS[*]}" | as_user tee "$bld/.pgnuma-abi-options" >/dev/null
	fi
	run_ninja "building $name" "$ABI/$name.ninja.log" -C "$bld" src/backend/postgres ||
		{ grep -E -A5 'error|FAILED' "$ABI/$name.ninja.log" | head -n 40 >&2; die "$name does not build"; }
}

build_postgres stock "$root"
build_postgres series "$head"

# The objects of postgres that depend on a file the series changes.
mapfile -t changed < <(git -C "$SRC" diff --name-only "$root" "$head" | sed 's|^|../src/|')
mapfile -t objects < <(
	as_user ninja -C "$ABI/series" -t deps |
		awk -v files="$(printf '%s\n' "${changed[@]}")" '
			BEGIN { n = split(files, f, "\n"); for (i = 1; i <= n; i++) if (f[i] != "") want[f[i]] = 1 }
			/^[^ ]/ { obj = $1; sub(/:$/, "", obj); next }
			/^    / { d = $1; if ((d in want) && obj ~ /^src\/backend\/postgres_lib\.a\.p\//) print obj }' |
		sort -u
)
step "ABI: abidiff of ${#objects[@]} objects that depend on files the series changes"
report=$ABI/abidiff.txt
: >"$report"
done_objects=0 last_shown=$SECONDS
for obj in "${objects[@]}"; do
	done_objects=$((done_objects + 1))
	if [ $((SECONDS - last_shown)) -ge "$(progress_interval)" ]; then
		last_shown=$SECONDS
		progress_line "abidiff: $done_objects of ${#objects[@]} objects"
	fi
	new_abi=$ABI/objects/series/${obj##*/}.abi
	old_abi=$ABI/objects/stock/${obj##*/}.abi
	mkdir -p "${new_abi%/*}" "${old_abi%/*}"
	# a new file only adds functions, which breaks nothing
	[ -f "$ABI/stock/$obj" ] || continue
	abidw --out-file "$new_abi" "$ABI/series/$obj" || die "abidw failed on $obj"
	abidw --out-file "$old_abi" "$ABI/stock/$obj" || die "abidw failed on $obj"
	set +e
	out=$(abidiff --no-unreferenced-symbols "$old_abi" "$new_abi" 2>&1)
	rc=$?
	set -e
	[ $((rc & 3)) = 0 ] || { echo "$out" >&2; die "abidiff failed on $obj (status $rc)"; }
	[ $rc = 0 ] || printf '=== %s\n%s\n\n' "$obj" "$out" >>"$report"
done
progress_done

# Exported symbols of the two binaries ("-" gone, "+" new).
diff <(nm -D --defined-only "$ABI/stock/src/backend/postgres" | awk '{print $3}' | sort -u) \
	<(nm -D --defined-only "$ABI/series/src/backend/postgres" | awk '{print $3}' | sort -u) |
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
