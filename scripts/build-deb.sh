#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# build-deb.sh OUTDIR - `make deb`: the Debian packages of this tree, built
# with Debian's tooling (dpkg-buildpackage, debhelper) from a copy of the
# tree under OUTDIR/src, so nothing is written beside the tree.  Leaves
# the .deb files, the .changes and .buildinfo in OUTDIR and runs lintian
# on them (failing on errors) when it is installed.
#
# DEB_BUILD_OPTIONS is passed on (default: parallel=<nproc>); with
# "nocheck" the package build skips the unit tests.  UNET_DEB_LINTIAN=0
# skips lintian.  The copy holds the tree's files as git sees them
# (tracked and untracked, not ignored), or all but build*/ outside git.
set -euo pipefail

OUT=${1:?usage: build-deb.sh OUTDIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(realpath -m "$OUT")

die() {
	echo "build-deb: $*" >&2
	exit 1
}

for t in dpkg-buildpackage dpkg-parsechangelog dh; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh installs it)"
done
ver=$(make -s -C "$ROOT" --no-print-directory version)
deb_ver=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
# A native package: the changelog's version is the library's.
[[ $deb_ver == "$ver" ]] ||
	die "debian/changelog says $deb_ver, include/unet-xdp/version.h says $ver (add a changelog entry: dch -v $ver)"

src=$OUT/src/unet-xdp-$ver
rm -rf "$OUT"
mkdir -p "$src"
cd "$ROOT"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[[ -e $f || -L $f ]] && printf '%s\0' "$f"
		done | tar --null -T - -cf - | tar -xf - -C "$src"
else
	tar --exclude=./build --exclude=./build-san --exclude='./build-*' -cf - . | tar -xf - -C "$src"
fi

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)}
echo "build-deb: unet-xdp $ver in $src (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
(cd "$src" && dpkg-buildpackage -F -uc -us) >"$OUT/build.log" 2>&1 || {
	tail -n 40 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (log: $OUT/build.log)"
}
mv "$OUT"/src/*.deb "$OUT"/src/*.changes "$OUT"/src/*.buildinfo "$OUT"/src/*.dsc "$OUT"/src/*.tar.* "$OUT"/
ls -1 "$OUT"/*.deb

if [[ ${UNET_DEB_LINTIAN:-1} != 0 ]]; then
	if command -v lintian >/dev/null; then
		# Run as root, lintian says so (and is right to); it is fine here.
		lintian --fail-on error --allow-root --tag-display-limit 0 "$OUT"/*.changes \
			>"$OUT/lintian.log" 2>&1 || {
			cat "$OUT/lintian.log" >&2
			die "lintian found errors (log: $OUT/lintian.log)"
		}
		echo "build-deb: lintian: $(grep -c '^E:' "$OUT/lintian.log" || true) errors," \
			"$(grep -c '^W:' "$OUT/lintian.log" || true) warnings (log: $OUT/lintian.log)"
		grep '^[EW]:' "$OUT/lintian.log" || true
	else
		echo "build-deb: lintian is not installed: not run"
	fi
fi
