#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh BUILD [SUBUID] - the subordinate-uid review's reproducer
# (README.md here).  As root from the source tree after make.  Two
# namespaces a/b (scripts/netns.sh), unetd in b with --subuid SUBUID
# (default: LXD's/Incus's "root:1000000:1000000000"; "none" for the old
# per-uid accounting).  Container A's root (uid 1000000) holds 256
# connections, then container B's root (uid 1065536, another tenant's
# isolated idmap slice of the same range) connects; then A floods WHOAMI
# for 3 s and B's worst reply latency is measured.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
RANGE=${2:-root:1000000:1000000000}
HOG=${HOG:-1000000}
VICTIM=${VICTIM:-1065536}
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../lib.sh
source "$ROOT/repro/lib.sh"
HERE=$ROOT/repro/rev-subuid
DIR=$(mktemp -d /tmp/rev-subuid.XXXXXX)
chmod 755 "$DIR"
DAEMON=''
cleanup() {
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null
	unet_netns_cleanup
	rm -rf "$DIR"
}
trap cleanup EXIT
unet_netns_setup "rs$$" || exit 1
if [[ $RANGE == none ]]; then SUB=none; else printf '%s\n' "$RANGE" >"$DIR/subuid"; SUB=$DIR/subuid; fi
repro_unetd "user 65534 kinds emulated tags 1-100" --subuid "$SUB"
echo "subuid: $RANGE"
T=(timeout -k 2 60 python3 "$HERE/tool.py" --socket "$DIR/unetd.sock")
in_b "${T[@]}" capshare --hog "$HOG" --victim "$VICTIM" --n 256 --hold 10
rc=$?
in_b "${T[@]}" budget --hog "$HOG" --victim "$VICTIM" --seconds 3
echo "daemon log (refusals):"
grep -E 'connections: refused|throttl' "$DIR/unetd.log" | sort | uniq -c | head -5
exit $rc
