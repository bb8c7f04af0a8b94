#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh BUILD [DEVS] [QUEUES] [SECONDS] [SCENARIO] - the teardown review's
# reproducers (README.md here; EPS=N in the environment: 65534's endpoint
# quota, default 8).  As root from the source tree after make.  Two
# namespaces a/b (scripts/netns.sh), unetd in b serving 65534 (the
# attacker) and 65533 (honest); the attacker makes one user+network
# namespace of its own with DEVS (default 32) veths uq0..uq<DEVS-1> of
# QUEUES (default 16) queues each, then cycles endpoints over them for
# SECONDS (default 10; tool.py cycle, at most 2000 endpoints).  Every
# 0.5 s: the daemon's open descriptors and the teardowns queued but not
# done (interfaces gone minus detaches done, from the daemon's log).
# SCENARIO "inline" instead: the attacker, 8 rounds, makes an endpoint on
# uq0, hangs up and at once makes another on uq0 (the device set up again
# while its teardown is queued or under way: done on the serving thread),
# while 65533 asks STATUS every 2 ms; prints 65533's worst round trip;
# "inline-other": the same rounds spread over uq0..uq7 (teardowns on the
# teardown thread), for comparison.  SCENARIO "exit": the attacker
# holds an endpoint on each device (at most its quota, 8), then the daemon
# gets SIGTERM: prints how long it took to exit, the detaches done and
# the pin directories left.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
DEVS=${2:-32}
Q=${3:-16}
SECS=${4:-10}
SC=${5:-grow}
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../lib.sh
source "$ROOT/repro/lib.sh"
HERE=$ROOT/repro/rev-teardown
DIR=$(mktemp -d /tmp/rev-teardown.XXXXXX)
chmod 755 "$DIR"
DAEMON='' HOLDER=''
cleanup() {
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null
	[[ -n $HOLDER ]] && kill "$HOLDER" 2>/dev/null
	unet_netns_cleanup
	[[ -n ${KEEP:-} ]] && cp "$DIR/unetd.log" "$KEEP"
	rm -rf "$DIR"
}
trap cleanup EXIT
unet_netns_setup "rt$$" || exit 1
repro_unetd "user 65534 kinds emulated tags 1-100 endpoints ${EPS:-8}
user 65533 kinds emulated tags 1-100" -v
# shellcheck disable=SC2016
in_b setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sh -c '
	i=0; while [ $i -lt '"$DEVS"' ]; do
		ip link add uq$i numtxqueues '"$Q"' numrxqueues '"$Q"' type veth peer name vq$i \
			numtxqueues '"$Q"' numrxqueues '"$Q"' || exit 1
		ip link set uq$i up && ip link set vq$i up || exit 1
		i=$((i + 1))
	done
	echo $$ && exec sleep 120' >"$DIR/h.log" 2>&1 &
HOLDER=$!
pid=''
for ((i = 0; i < 200; i++)); do
	pid=$(grep -xE '[0-9]+' "$DIR/h.log") && break
	sleep 0.05
done
[[ -n $pid ]] || { cat "$DIR/h.log"; exit 1; }
fds0=$(ls /proc/"$DAEMON"/fd | wc -l)
ATTACK=$ROOT/tests/tools/unetd-attack.py
if [[ $SC == exit ]]; then
	# Each set-up in the attacker's namespace costs ~70 ms of its CPU
	# budget (50 ms a second): 24 take about 30 s.
	in_b timeout -k 2 120 python3 "$HERE/tool.py" --socket "$DIR/unetd.sock" --uid 65534 \
		hold --netns "/proc/$pid/ns/net" --devs "$DEVS" --seconds 60 >"$DIR/hold.out" 2>&1 &
	for ((i = 0; i < 1200; i++)); do
		grep -qE '^(held|endpoint|error)' "$DIR/hold.out" && break
		sleep 0.05
	done
	cat "$DIR/hold.out"
	echo "pin directories before SIGTERM: $(find "$UNET_PIN_ROOT" -maxdepth 1 -name 'uq*@*' | wc -l)"
	t0=$(date +%s%N)
	kill -TERM "$DAEMON"
	while kill -0 "$DAEMON" 2>/dev/null && (($(date +%s%N) - t0 < 20000000000)); do sleep 0.02; done
	echo "exited after $((($(date +%s%N) - t0) / 1000000)) ms; detached $(grep -c 'detached, pins removed' "$DIR/unetd.log");" \
		"pin directories left $(find "$UNET_PIN_ROOT" -maxdepth 1 -name 'uq*@*' | wc -l)"
	grep -E 'teardown|stopped' "$DIR/unetd.log"
	DAEMON=''
	exit 0
fi
if [[ $SC == inline* ]]; then
	echo "daemon $DAEMON; $DEVS devices of $Q queues in 65534's namespace; scenario $SC"
	in_b timeout -k 2 60 python3 "$ATTACK" --socket "$DIR/unetd.sock" --uid 65533 \
		status-ping --seconds "$SECS" >"$DIR/ping.out" 2>&1 &
	ping=$!
	sleep 0.3
	if [[ $SC == inline ]]; then
		in_b timeout -k 2 60 python3 "$ATTACK" --socket "$DIR/unetd.sock" --uid 65534 \
			recreate --netns "/proc/$pid/ns/net" --iface uq0 --rounds 8 --hold 0.1
	else
		in_b timeout -k 2 60 python3 "$HERE/tool.py" --socket "$DIR/unetd.sock" --uid 65534 \
			cycle --netns "/proc/$pid/ns/net" --devs "$DEVS" --count 16 --seconds 30
	fi
	wait "$ping"
	echo "65533: $(cat "$DIR/ping.out")"
	echo "interfaces gone $(grep -c 'not served any more' "$DIR/unetd.log"), finished inline $(grep -c 'teardown finished here' "$DIR/unetd.log")"
	exit 0
fi
echo "daemon $DAEMON: $fds0 fds before; $DEVS devices of $Q queues in 65534's namespace"
in_b timeout -k 2 $((SECS + 30)) python3 "$HERE/tool.py" --socket "$DIR/unetd.sock" --uid 65534 \
	cycle --netns "/proc/$pid/ns/net" --devs "$DEVS" --seconds "$SECS" >"$DIR/cycle.out" 2>&1 &
cyc=$!
sample() {
	local gone det
	gone=$(grep -c 'no endpoint left: not served any more' "$DIR/unetd.log")
	det=$(grep -c 'detached, pins removed' "$DIR/unetd.log")
	printf '%5.1f s: fds %4d  interfaces gone %4d  detached %4d  queued %4d  rss %s kB\n' \
		"$1" "$(ls /proc/"$DAEMON"/fd | wc -l)" "$gone" "$det" $((gone - det)) \
		"$(awk '/VmRSS/ {print $2}' /proc/"$DAEMON"/status)"
}
t=0
while kill -0 "$cyc" 2>/dev/null && ((t < (SECS + 30) * 2)); do
	sample "$(awk -v t=$t 'BEGIN { print t / 2 }')"
	sleep 0.5
	t=$((t + 1))
done
cat "$DIR/cycle.out"
echo "-- the attacker stopped; the queue drains:"
for ((j = 0; j < 120; j++)); do
	sample "$(awk -v t=$((t + j)) 'BEGIN { print t / 2 }')"
	gone=$(grep -c 'no endpoint left: not served any more' "$DIR/unetd.log")
	det=$(grep -c 'detached, pins removed' "$DIR/unetd.log")
	((gone == det)) && break
	sleep 0.5
done
sleep 1
echo "after 1 s more (baseline $fds0 fds):"
sample "$(awk -v t=$((t + j + 2)) 'BEGIN { print t / 2 }')"
grep -E 'warn|error' "$DIR/unetd.log" | sort | uniq -c | sort -rn | head -5
