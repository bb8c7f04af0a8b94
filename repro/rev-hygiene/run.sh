#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh BUILD SCENARIO - the log-limit review's reproducers (README.md
# here).  As root from the source tree after make.  Two namespaces a/b
# (scripts/netns.sh), unetd in b with the policy below; tool.py's
# clients take their uids before they connect.  SCENARIO: sweep, inject,
# lifecycle, manyuids, all.  For each, the lines the daemon's log grew by.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
SC=${2:-all}
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../lib.sh
source "$ROOT/repro/lib.sh"
HERE=$ROOT/repro/rev-hygiene
DIR=$(mktemp -d /tmp/rev-hygiene.XXXXXX)
chmod 755 "$DIR"
DAEMON=''
cleanup() {
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null
	unet_netns_cleanup
	rm -rf "$DIR"
}
trap cleanup EXIT
unet_netns_setup "rh$$" || exit 1
repro_unetd "user 65534 kinds emulated tags 1-100
user 65533 kinds emulated tags 1-100"
T=(timeout -k 2 60 python3 "$HERE/tool.py" --socket "$DIR/unetd.sock")
mark() { FROM=$(($(wc -l <"$DIR/unetd.log") + 1)); }
# grown WHAT: the log's lines since mark (after the summaries are due).
grown() {
	sleep 1.5
	local all
	all=$(tail -n +"$FROM" "$DIR/unetd.log")
	echo "log: $(wc -l <<<"$all") lines since the scenario began ($1)"
	echo "  summaries: $(grep -c 'log lines of its requests suppressed' <<<"$all")," \
		"lines suppressed in them: $(sed -nE 's/.*: ([0-9]+) log lines of its requests suppressed.*/\1/p' <<<"$all" | awk '{ s += $1 } END { print s + 0 }')"
	echo "  most frequent shapes (digits as N):"
	sed -E 's/[0-9]+/N/g' <<<"$all" | sort | uniq -c | sort -rn | head -5 | sed 's/^/   /'
}
case $SC in
sweep | all)
	echo "== sweep: 65534 and 65533 in turn, 40 rounds, each 12 requests with a set pad (EINVAL)"
	echo "   (a working per-uid limit: at most 2 x (10 + 5 x ~3 s) = ~50 refusal lines)"
	mark
	in_b "${T[@]}" sweep --uids 65534,65533 --rounds 40 --per 12 --gap 25
	grown "refusal lines: $(tail -n +"$FROM" "$DIR/unetd.log" | grep -c 'pad is not zero: refused')"
	echo "-- the same from 65534 alone (nobody else connects: its record is never swept)"
	mark
	in_b "${T[@]}" sweep --uids 65534 --rounds 80 --per 12 --gap 25
	grown "refusal lines: $(tail -n +"$FROM" "$DIR/unetd.log" | grep -c 'pad is not zero: refused')"
	;;&
inject | all)
	echo "== inject: 65534 names an interface '\\nunetd: error:' / 15 newlines in EP_CREATE, 10 times"
	mark
	in_b "${T[@]}" inject --uid 65534 --count 10
	grown "forged 'unetd: error:' lines: $(tail -n +"$FROM" "$DIR/unetd.log" | grep -c '^unetd: error: refused: $')"
	tail -n +"$FROM" "$DIR/unetd.log" | head -8 | cat -A | sed 's/^/   | /'
	;;&
lifecycle | all)
	echo "== lifecycle: 65533 creates and destroys an emulated endpoint on $IF_B for 2 s"
	echo "   (65534 holds none, so $IF_B is served only while 65533's endpoint lives)"
	mark
	in_b python3 "$ROOT/tests/tools/unetd-attack.py" --socket "$DIR/unetd.sock" --uid 65533 \
		--iface "$IF_B" --seconds 2 ep-cycle
	grown "endpoint lines: $(tail -n +"$FROM" "$DIR/unetd.log" | grep -cE 'emulated endpoint [0-9]+ (for uid 65533|freed)|serving|not served any more')"
	;;&
manyuids | all)
	echo "== manyuids: uids 60000..60199, 10 refused requests each (one user with a subuid range has 65536)"
	mark
	in_b "${T[@]}" manyuids --first 60000 --n 200 --per 10
	grown "refusal lines: $(tail -n +"$FROM" "$DIR/unetd.log" | grep -c 'pad is not zero: refused')"
	;;
esac
kill -0 "$DAEMON" 2>/dev/null && echo "daemon alive" || echo "daemon DEAD"
