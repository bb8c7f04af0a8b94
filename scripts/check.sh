#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# check.sh BUILD_DIR SAN_BUILD_DIR - `make check`'s two passes, once
# BUILD_DIR is built: every test on BUILD_DIR (tests/run-all.sh), then
# every test again on SAN_BUILD_DIR, the ASan+UBSan build, which the
# command in CHECK_SAN_BUILD makes (the Makefile's, under its build lock).
#
# The sanitizers' build runs while the plain pass's tests do, at idle
# priority (SCHED_IDLE; nice 19 where that cannot be had): the tests
# spend most of their time waiting on each other and on the network with
# a CPU idle, a compiler on idle priority gets only what they leave, and
# the second pass starts on a finished build instead of compiling for a
# minute first.  Its output is printed when the plain pass is over.
#
# Exits non-zero if the plain pass failed (the sanitizers' pass does not
# run then, as before), if the sanitizers' build failed, or if the
# sanitizers' pass failed.

set -u

BUILD=${1:-}
SAN_BUILD=${2:-}
if [[ -z $BUILD || -z $SAN_BUILD || -z ${CHECK_SAN_BUILD:-} ]]; then
	echo "usage: CHECK_SAN_BUILD='make command' $0 BUILD_DIR SAN_BUILD_DIR" >&2
	exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")

idle=(nice -n 19)
chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0)

san_log=$(mktemp /tmp/unet-check-san-build.XXXXXX) || exit 1
trap 'rm -f "$san_log"' EXIT
echo "check: building $SAN_BUILD beside the plain pass (${idle[*]}): $CHECK_SAN_BUILD"
"${idle[@]}" bash -c "$CHECK_SAN_BUILD" >"$san_log" 2>&1 &
san_pid=$!

bash "$ROOT/tests/run-all.sh" "$BUILD"
plain=$?

wait "$san_pid"
san_built=$?
echo "check: the build of $SAN_BUILD (exit $san_built):"
cat "$san_log"
if ((plain != 0)); then
	echo "check: the plain pass failed: no pass under the sanitizers" >&2
	exit "$plain"
fi
if ((san_built != 0)); then
	echo "check: the build of $SAN_BUILD failed" >&2
	exit "$san_built"
fi
UNET_SANITIZED=1 bash "$ROOT/tests/run-all.sh" "$SAN_BUILD"
