#!/usr/bin/env bash
# tools/export.sh: rewrite patches/ from the commits of build/src.
#
# Deterministic: exporting an unchanged tree changes no byte of patches/.
# That is why the "From <hash>" line is zeroed, the git version signature is
# dropped, abbreviations have a fixed length, and the cover letter's date is
# the newest author date of the series rather than the current time.
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "no tree in build/src" "create it with: make tree"
[ -z "$(git -C "$SRC" status --porcelain --untracked-files=no)" ] ||
	die "build/src has uncommitted changes" "commit them in build/src (git commit --fixup=... for an existing patch), then make export"
[ "$(git -C "$SRC" rev-parse --abbrev-ref HEAD)" != HEAD ] ||
	warn "build/src is on a detached HEAD; exporting it anyway"

root=$(pristine_commit)
n=$(git -C "$SRC" rev-list --count "$root"..HEAD)
[ "$n" -gt 0 ] || die "build/src has no commits on top of the pristine tree; nothing to export"
if git -C "$SRC" log --format=%s "$root"..HEAD | grep -qE '^(fixup|squash|amend)! '; then
	die "build/src has fixup!/squash! commits" "fold them first: git -C build/src rebase -i --autosquash upstream"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$SRC" -c core.abbrev=12 -c diff.noprefix=false -c format.signature= \
	format-patch -q --zero-commit --no-signature --numbered --no-cover-letter \
	--subject-prefix="PATCH v$SERIES_VERSION" -o "$tmp" "$root"..HEAD

# The cover letter: prose from tools/cover-letter.txt (first line = title),
# then the shortlog and diffstat of the whole series.
date=$(git -C "$SRC" log -1 --format=%aD --author-date-order "$root"..HEAD)
title=$(head -n 1 "$TOP/tools/cover-letter.txt")
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: $GIT_IDENT_NAME <$GIT_IDENT_EMAIL>"
	echo "Date: $date"
	echo "Subject: [PATCH v$SERIES_VERSION $(printf "%0${#n}d" 0)/$n] $title"
	echo
	tail -n +2 "$TOP/tools/cover-letter.txt" | sed '1{/^$/d}'
	echo
	git -C "$SRC" shortlog --no-merges "$root"..HEAD </dev/null | sed '${/^$/d}'
	echo
	git -C "$SRC" diff --stat=72 "$root" HEAD
	echo
	echo "base: PostgreSQL $PG_UPSTREAM_VERSION ($PG_DEB_PACKAGE ${PG_DEB_VERSION} orig tarball, sha256 $PG_ORIG_SHA256)"
} >"$tmp/0000-cover-letter.patch"

mkdir -p "$PATCHES"
changed=0
for f in "$tmp"/*.patch; do
	b=$(basename "$f")
	if ! cmp -s "$f" "$PATCHES/$b"; then
		info "updated $b"
		changed=$((changed + 1))
	fi
done
for f in "$PATCHES"/*.patch; do
	[ -e "$f" ] || continue
	b=$(basename "$f")
	if [ ! -e "$tmp/$b" ]; then
		info "removed $b"
		changed=$((changed + 1))
	fi
done
rm -f "$PATCHES"/*.patch
cp "$tmp"/*.patch "$PATCHES"/
step "exported $n patches to patches/ ($changed files changed)"
