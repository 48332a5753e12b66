#!/usr/bin/env bash
# tools/tree.sh: materialise build/src from the upstream tree and patches/.
#
# build/src is a git repository: its first commit is the pristine upstream
# tree, and each following commit is one patch of the series (git am).
# Commits are made with fixed identities and dates, so recreating the tree
# gives the same commit hashes every time.
#
# If build/src already exists and matches patches/, nothing is done.  If it
# differs (unexported work, or patches/ changed under it), we stop rather
# than destroy work; FORCE=1 recreates it from patches/.
#
# Usage: tree.sh [--check]   (--check: only report whether it is in sync)
. "$(dirname "$0")/lib.sh"

# The tree object of the pristine tree plus patches/, computed in a scratch
# index without touching the work tree; empty if the series does not apply.
patches_tree() {
	local idx root p tree=
	root=$(pristine_commit) || return 0
	idx=$(mktemp)
	rm -f "$idx"
	if GIT_INDEX_FILE=$idx git -C "$SRC" read-tree "$root"; then
		tree=ok
		for p in $(series_patches); do
			if ! GIT_INDEX_FILE=$idx git -C "$SRC" apply --cached "$p" 2>/dev/null; then
				tree=
				break
			fi
		done
		[ -z "$tree" ] || tree=$(GIT_INDEX_FILE=$idx git -C "$SRC" write-tree)
	fi
	rm -f "$idx"
	echo "$tree"
}

# Is build/src's HEAD exactly the pristine tree plus patches/?
tree_in_sync() {
	local t
	t=$(patches_tree)
	[ -n "$t" ] && [ "$t" = "$(git -C "$SRC" rev-parse 'HEAD^{tree}')" ]
}

# Is build/src ahead of patches/: does one of its commits (other than HEAD)
# hold exactly patches/?  Then build/src has new, unexported commits.
# Prints how many.
tree_ahead() {
	local t c n=0
	t=$(patches_tree)
	[ -n "$t" ] || return 1
	for c in $(git -C "$SRC" rev-list HEAD); do
		if [ "$(git -C "$SRC" rev-parse "$c^{tree}")" = "$t" ]; then
			[ $n -gt 0 ] && echo $n && return 0
			return 1
		fi
		n=$((n + 1))
	done
	return 1
}

if [ "${1:-}" = --check ]; then
	[ -d "$SRC/.git" ] || die "no tree in $SRC: run make tree"
	tree_in_sync && { echo "build/src matches patches/"; exit 0; }
	echo "build/src does not match patches/"
	exit 1
fi

if [ -d "$SRC/.git" ] && [ "${FORCE:-0}" != 1 ]; then
	if tree_in_sync; then
		[ -z "$(git -C "$SRC" status --porcelain --untracked-files=no)" ] ||
			warn "build/src has uncommitted edits; they are not part of patches/ (commit, then make export)"
		info "build/src is up to date with patches/ ($(series_patches | wc -l) patches)"
		exit 0
	fi
	if n=$(tree_ahead); then
		warn "build/src has $n commit(s) not exported to patches/ yet; building them (make export to save)"
		exit 0
	fi
	die "build/src does not match patches/" \
		"If you committed work in build/src, save it first:  make export" \
		"To throw build/src away and recreate it from patches/:  make tree FORCE=1"
fi

upstream=$("$TOP/tools/fetch.sh" | tail -n 1)

step "creating build/src from $(basename "$upstream") and $(series_patches | wc -l) patches"
new=$BUILD/src.new
rm -rf "$new"
mkdir -p "$new"
trap 'rm -rf "$new"' EXIT

if [ -d "$upstream" ]; then
	(cd "$upstream" && tar --exclude=.git -cf - .) | (cd "$new" && tar -xf -)
else
	tar -xf "$upstream" -C "$new" --strip-components=1 ||
		die "could not unpack $upstream"
fi

export GIT_AUTHOR_NAME=$GIT_IDENT_NAME GIT_AUTHOR_EMAIL=$GIT_IDENT_EMAIL
export GIT_COMMITTER_NAME=$GIT_IDENT_NAME GIT_COMMITTER_EMAIL=$GIT_IDENT_EMAIL
git -C "$new" init -q -b master
git -C "$new" config user.name "$GIT_IDENT_NAME"
git -C "$new" config user.email "$GIT_IDENT_EMAIL"
git -C "$new" config core.abbrev 12
git -C "$new" add -A -f
GIT_AUTHOR_DATE=$PRISTINE_DATE GIT_COMMITTER_DATE=$PRISTINE_DATE \
	git -C "$new" commit -q -m "PostgreSQL $(sed -n "s/^ *version: '\([0-9][0-9.a-z]*\)',\$/\1/p" "$new/meson.build" | head -n 1), pristine upstream tree" \
	-m "From $(basename "$upstream")."
git -C "$new" tag upstream

for p in $(series_patches); do
	info "applying $(basename "$p")"
	if ! git -C "$new" am -q --committer-date-is-author-date "$p" >"$new/.git/am.log" 2>&1; then
		cat "$new/.git/am.log" >&2
		die "patch $(basename "$p") does not apply to $(basename "$upstream")" \
			"nothing was changed in build/src.  If the upstream version differs from the pinned" \
			"one, the series must be rebased onto it; otherwise patches/ is damaged (git status)."
	fi
done

rm -rf "$SRC"
mv "$new" "$SRC"
trap - EXIT
info "build/src: $(git -C "$SRC" rev-list --count upstream..HEAD) commits on top of upstream"
