#!/usr/bin/env bash
# tools/fetch.sh: get the upstream PostgreSQL tree the series applies to.
#
# Prints, on its last line of stdout, the path of a tarball or of a source
# directory.  Order of preference:
#   1. PGSRC=/path/to/tree-or-tarball, given by the user;
#   2. the pinned Debian orig tarball, already downloaded and verified;
#   3. the pinned version from Debian's registry (sha256 checked);
#   4. the newest postgresql-18 source Debian offers, with a loud warning:
#      the apply step then proves whether the series still applies.
. "$(dirname "$0")/lib.sh"

DL=$BUILD/download
PINNED_TARBALL=$DL/${PG_DEB_PACKAGE}_${PG_UPSTREAM_VERSION}.orig.tar.bz2

tree_version() {
	sed -n "s/^ *version: '\([0-9][0-9.a-z]*\)',\$/\1/p" "$1/meson.build" | head -n 1
}

if [ -n "${PGSRC:-}" ]; then
	if [ -d "$PGSRC" ]; then
		[ -f "$PGSRC/meson.build" ] && [ -d "$PGSRC/src/backend/storage/buffer" ] ||
			die "PGSRC=$PGSRC is not a PostgreSQL source tree" \
				"point PGSRC at the top of an unpacked PostgreSQL tree, or at its tarball"
		v=$(tree_version "$PGSRC")
		[ "$v" = "$PG_UPSTREAM_VERSION" ] ||
			warn "PGSRC is PostgreSQL '$v', not $PG_UPSTREAM_VERSION: the series may not apply"
		step "using the source tree given in PGSRC: $PGSRC (PostgreSQL $v)" >&2
	elif [ -f "$PGSRC" ]; then
		tar -tf "$PGSRC" >/dev/null 2>&1 ||
			die "PGSRC=$PGSRC is not a readable tarball"
		step "using the tarball given in PGSRC: $PGSRC" >&2
		sum=$(sha256sum "$PGSRC" | cut -d' ' -f1)
		[ "$sum" = "$PG_ORIG_SHA256" ] ||
			warn "PGSRC tarball is not the pinned $PG_UPSTREAM_VERSION orig tarball (sha256 $sum); the apply step will tell whether the series applies"
	else
		die "PGSRC=$PGSRC does not exist"
	fi
	echo "$PGSRC"
	exit 0
fi

verify_pinned() {
	local sum
	sum=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$sum" = "$PG_ORIG_SHA256" ]
}

if [ -f "$PINNED_TARBALL" ]; then
	if verify_pinned "$PINNED_TARBALL"; then
		echo "$PINNED_TARBALL"
		exit 0
	fi
	warn "cached $PINNED_TARBALL has a bad checksum; downloading it again"
	rm -f "$PINNED_TARBALL"
fi
# A previously downloaded newer version, if the pinned one is gone.
cached_other=$(ls "$DL"/${PG_DEB_PACKAGE}_*.orig.tar.* 2>/dev/null | sort -V | tail -n 1 || true)

is_root || [ -n "$cached_other" ] ||
	die "PostgreSQL $PG_UPSTREAM_VERSION sources are not downloaded yet and downloading needs root (apt-get)" \
		"run this as root once, or give an existing tree or tarball: PGSRC=/path make ..."

if [ -z "$cached_other" ]; then
	ensure_packages dpkg-dev
	# apt-get source needs a deb-src entry that knows postgresql-18: sid has it.
	if ! apt-cache showsrc "$PG_DEB_PACKAGE" 2>/dev/null | grep -q '^Version:'; then
		step "adding a deb-src entry for Debian sid (source packages only)" >&2
		cat >/etc/apt/sources.list.d/pgnuma-sid-src.sources <<-EOF
			Types: deb-src
			URIs: http://deb.debian.org/debian
			Suites: sid
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		apt-get update -qq >&2 || die "apt-get update failed" \
			"check access to deb.debian.org, or give a tree or tarball with PGSRC=/path"
	fi
fi

mkdir -p "$DL"
tmp=$(mktemp -d "$DL/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

step "downloading $PG_DEB_PACKAGE $PG_DEB_VERSION source from Debian" >&2
if with_heartbeat downloading apt.log apt-get source --download-only "$PG_DEB_PACKAGE=$PG_DEB_VERSION" >&2; then
	f=$(ls ./*.orig.tar.* | head -n 1)
	verify_pinned "$f" ||
		die "checksum mismatch for $(basename "$f")" \
			"expected sha256 $PG_ORIG_SHA256" \
			"got      $(sha256sum "$f" | cut -d' ' -f1)" \
			"the registry served something else than the pinned release; nothing was unpacked." \
			"Retry later, or give a verified tree or tarball with PGSRC=/path"
	mv "$f" "$PINNED_TARBALL"
	echo "$PINNED_TARBALL"
	exit 0
fi

if [ -n "$cached_other" ]; then
	f=$cached_other
else
	newest=$(apt-cache showsrc "$PG_DEB_PACKAGE" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$newest" ] ||
		die "Debian's registry offers no $PG_DEB_PACKAGE source at all" \
			"$(tail -n 3 apt.log)" \
			"give a PostgreSQL 18 tree or tarball with PGSRC=/path"
	with_heartbeat downloading apt.log apt-get source --download-only "$PG_DEB_PACKAGE=$newest" >&2 ||
		die "downloading $PG_DEB_PACKAGE $newest failed" "$(tail -n 3 apt.log)" \
			"give a PostgreSQL 18 tree or tarball with PGSRC=/path"
	f=$(ls ./*.orig.tar.* | head -n 1)
	mv "$f" "$DL/"
	f=$DL/$(basename "$f")
fi
{
	echo
	echo "#####################################################################"
	echo "#  PINNED PostgreSQL $PG_UPSTREAM_VERSION ($PG_DEB_PACKAGE $PG_DEB_VERSION) IS NOT AVAILABLE."
	echo "#  USING $(basename "$f") INSTEAD."
	echo "#  The series was written against $PG_UPSTREAM_VERSION; the apply step will"
	echo "#  show whether it still applies.  Results are not those of the base."
	echo "#####################################################################"
	echo
} >&2
echo "$f"
