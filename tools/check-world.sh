#!/usr/bin/env bash
# tools/check-world.sh: build the series and run every test of the tree
# (all of `meson test`, 347 tests as of this writing, PostgreSQL's own included), as the
# unprivileged user.  Not part of `make check` or CI: it takes too long
# (see README.md, "The full test suite").
#
# Usage: check-world.sh
# The exit status is the truth; the last line gives the counts.
. "$(dirname "$0")/lib.sh"

"$TOP/tools/build.sh"
exec "$TOP/tools/check.sh" "$BUILD/meson" all
