#!/usr/bin/env bash
# tools/pgindent.sh: run PostgreSQL's pgindent on the C files of build/src
# that differ from the last commit (or on the files given), with the
# pg_bsd_indent of the development build.  New typedefs must be added to
# src/tools/pgindent/typedefs.list first (tools/pgindent.sh --typedef NAME).
. "$(dirname "$0")/lib.sh"

indent=$BUILD/meson/src/tools/pg_bsd_indent/pg_bsd_indent
[ -x "$indent" ] || die "no pg_bsd_indent in build/meson" "run make build first"

if [ "${1:-}" = --typedef ]; then
	shift
	list=$SRC/src/tools/pgindent/typedefs.list
	for t in "$@"; do
		grep -qx -- "$t" "$list" || echo "$t" >>"$list"
	done
	LC_ALL=C sort -u -o "$list" "$list"
	exit 0
fi

cd "$SRC"
if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <({ git diff --name-only HEAD; git ls-files --others --exclude-standard; } | grep -E '\.[ch]$' | sort -u)
fi
[ ${#files[@]} -gt 0 ] || { info "no C files changed"; exit 0; }
PATH=/usr/bin:/bin src/tools/pgindent/pgindent --indent="$indent" "${files[@]}"
info "pgindent: ${#files[@]} files"
