#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-fair.sh [--reps N] [--json] BUILD_DIR - unetd's fair service in
# time: the round trip of an emulated client's blocking 64-byte
# ping-pong alone and beside another emulated client flooding at full
# rate, interleaved (alone, flood, alone, flood, ...), and per repetition
# the ratio of the two p50s; at the end the median ratio, its range and
# the median p50s.  Then the same property counted in frames (what
# make check asserts, tests/integration/t_unetd_fair.sh): how many flood
# frames a light client's message waits behind on the wire.
#
# Who runs where: unetd and the ping-pong's two ends on CPU 0, the flood
# on CPU 1, as one would run unetd on a core of its own (left to the
# kernel, the spinning daemon sometimes lands on the flooding client's
# CPU and every round trip waits for its time slice: milliseconds, the
# kernel's placement rather than the daemon's order).  The ping-pong is
# blocking: spinning, four spinners would share two CPUs and the round
# trip would measure time slices.  Measure on a quiet machine: anything
# else on the CPUs moves these figures by tens of percent.
# Needs root, jq and python3.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=scripts/stage.sh
source "$ROOT/scripts/stage.sh"
REPS=3 JSON=0 COUNT=${FAIR_COUNT:-5000}
while (($#)); do
	case $1 in
	--reps) REPS=$2; shift 2 ;;
	--json) JSON=1; shift ;;
	-h | --help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) break ;;
	esac
done
(($# == 1)) || { echo "usage: $0 [--reps N] [--json] BUILD_DIR" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "$0: --reps takes a positive count" >&2; exit 2; }
(($(nproc) >= 2)) || { echo "$0: needs 2 CPUs (the flood on one, the ping-pong on the other)" >&2; exit 2; }
for c in jq python3; do command -v "$c" >/dev/null || { echo "$0: needs $c" >&2; exit 2; }; done
[[ -x $1/unet-bench && -x $1/unetd && -x $1/tools/unet-fair ]] ||
	{ echo "$0: $1: no unet-bench, unetd or tools/unet-fair there (make all first)" >&2; exit 2; }
umask 022

LOGS=$(mktemp -d /tmp/unet-bench-fair.XXXXXX) || exit 1
DDIR=$(mktemp -d /tmp/unet-bench-fair-d.XXXXXX) || exit 1
chmod 755 "$DDIR"
DPID="" FLOOD=""
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[[ -n $FLOOD ]] && kill -TERM "$FLOOD" 2>/dev/null
	[[ -n $DPID ]] && kill -TERM "$DPID" 2>/dev/null
	unet_netns_cleanup
	unet_stage_remove
	rm -rf "$DDIR" "$LOGS"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

unet_stage "$1" || exit 1
BENCH=$UNET_STAGE/unet-bench
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups env "UNET_DAEMON_SOCKET=$DDIR/unetd.sock")
unet_netns_setup "ufair$$" || exit 1
in_a "$UNET_STAGE/unetctl" attach "$IF_A" --mode skb >/dev/null || exit 1
printf 'user 65534 kinds emulated tags 1-100 endpoints 4\n' >"$DDIR/policy"
chmod 644 "$DDIR/policy"
unet_bg_b taskset -c 0 "$UNET_STAGE/unetd" --foreground --socket "$DDIR/unetd.sock" --policy "$DDIR/policy" \
	--pin-root "$UNET_PIN_ROOT" >"$LOGS/unetd.log" 2>&1
DPID=$UNET_BG_PID
for ((i = 0; i < 100; i++)); do
	[[ -S $DDIR/unetd.sock ]] && grep -q 'info: ready' "$LOGS/unetd.log" && break
	sleep 0.05
done
[[ -S $DDIR/unetd.sock ]] || { cat "$LOGS/unetd.log" >&2; echo "$0: unetd did not start" >&2; exit 1; }

# pingpong: one blocking 64-byte ping-pong of COUNT round trips (nobody,
# emulated, in b) against root's echo in a; prints its p50 in us.
pingpong() {
	local e p50
	unet_bg_a taskset -c 0 "$BENCH" echo --transport unet --iface "$IF_A" --tag 1 --peer "$MAC_B" \
		--peer-tag 2 --mode block --timeout 100 >/dev/null 2>"$LOGS/echo.err"
	e=$UNET_BG_PID
	for ((i = 0; i < 100; i++)); do grep -q ' ready$' "$LOGS/echo.err" && break; sleep 0.05; done
	p50=$(ip netns exec "$NS_B" "${NOBODY[@]}" timeout 90 taskset -c 0 "$BENCH" pingpong --transport unet \
		--iface "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 --size 64 --count "$COUNT" --warmup 500 \
		--mode block --timeout 80 2>>"$LOGS/pp.err" | jq -r '.p50_us // empty')
	unet_bg_wait "$e" 10 >/dev/null
	echo "${p50:-nan}"
}

# flood_start / flood_stop: nobody's unpaced 64-byte source on CPU 1 to
# a tag nobody holds in a (the XDP program there drops and counts it).
flood_start() {
	ip netns exec "$NS_B" "${NOBODY[@]}" taskset -c 1 "$BENCH" source --transport unet --iface "$IF_B" \
		--tag 3 --peer "$MAC_A" --peer-tag 4 --size 64 --count 1000000000 --batch 32 \
		--segment 16777216 --ring 8192 --timeout 120 >/dev/null 2>"$LOGS/flood.err" &
	FLOOD=$!
	sleep 1
}
flood_stop() {
	kill -TERM "$FLOOD" 2>/dev/null
	wait "$FLOOD" 2>/dev/null
	FLOOD=""
}

rows=$LOGS/rows
for ((r = 1; r <= REPS; r++)); do
	alone=$(pingpong)
	flood_start
	flooded=$(pingpong)
	flood_stop
	echo "$r $alone $flooded" | tee -a "$rows" >&2
done

# The same property in frames (the make check test's measurement).
unet_bg_a "$UNET_STAGE/tools/unet-fair" sink "$IF_A" --peer "$MAC_B" --flood-tag 4 --flood-peer-tag 3 \
	--ping-tag 2 --ping-peer-tag 1 --count 2000 --timeout 100 >"$LOGS/sink.out" 2>"$LOGS/sink.err"
s=$UNET_BG_PID
for ((i = 0; i < 100; i++)); do grep -q '^ready$' "$LOGS/sink.err" && break; sleep 0.05; done
ip netns exec "$NS_B" "${NOBODY[@]}" timeout 110 "$UNET_STAGE/tools/unet-fair" probe "$IF_B" --peer "$MAC_A" \
	--flood-tag 3 --flood-peer-tag 4 --ping-tag 1 --ping-peer-tag 2 --count 2000 --timeout 90 \
	>"$LOGS/probe.out" 2>"$LOGS/probe.err"
unet_bg_wait "$s" 30 >/dev/null

python3 - "$rows" "$JSON" "$LOGS/sink.out" "$LOGS/probe.out" <<'PY'
import json, statistics, sys
runs = []
for line in open(sys.argv[1]):
    _, a, f = line.split()
    if a != "nan" and f != "nan":
        runs.append((float(a), float(f)))
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return {}
sink, probe = load(sys.argv[3]), load(sys.argv[4])
out = {"runs": len(runs)}
if runs:
    ratios = [f / a for a, f in runs]
    out.update(p50_ratio=round(statistics.median(ratios), 3), p50_ratio_min=round(min(ratios), 3),
               p50_ratio_max=round(max(ratios), 3),
               alone_p50_us=statistics.median(a for a, _ in runs),
               flood_p50_us=statistics.median(f for _, f in runs))
out.update(wait_frames_p50=sink.get("wait_p50"), wait_frames_p90=sink.get("wait_p90"),
           flood_backlog_p50=probe.get("backlog_p50"))
if sys.argv[2] == "1":
    print(json.dumps(out))
elif runs:
    print("emulated 64 B blocking ping-pong beside a flood / alone, p50: %.2fx [%.2f-%.2f] over %d runs"
          " (%.1f us against %.1f us)" % (out["p50_ratio"], out["p50_ratio_min"], out["p50_ratio_max"],
                                          len(runs), out["flood_p50_us"], out["alone_p50_us"]))
    print("a light client's message waits behind %s flood frames (median; p90 %s) with %s queued"
          % (out["wait_frames_p50"], out["wait_frames_p90"], out["flood_backlog_p50"]))
else:
    print("no ping-pong completed: logs were in the run's directory")
    sys.exit(1)
PY
