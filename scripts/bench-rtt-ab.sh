#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-rtt-ab.sh [--xdp-mode skb|native] [--reps N] [--size B]... BUILD_DIR...
#   UAM's spinning round trip against raw U-Net's, for several builds,
#   alternating: per repetition, size and build, a raw U-Net pingpong and
#   then a UAM one (unet-bench pingpong against a spinning echo, client on
#   CPU 0 and echo on CPU 1, as `make bench` runs them), and the ratio of
#   their p50s.  One pair of namespaces for the whole run.  At the end, per
#   size and build: the median of the per-repetition ratios, their range,
#   and the median p50s.  For a change to UAM's message path: build the
#   old tree elsewhere (git worktree add /tmp/old COMMIT && make -C /tmp/old)
#   and run
#       scripts/bench-rtt-ab.sh --reps 8 --size 64 --size 1472 /tmp/old/build build
#   Single p50s of 3-4 us move by 5-30% between runs on a shared VM (and
#   by up to 2x between two processes a second apart): where a build's
#   unet-bench has --vs, UAM and raw U-Net run interleaved in one process
#   pair (blocks of 1000 round trips) and their ratio is that run's
#   p50_ratio; an older build runs them one after the other.  Compare over
#   several repetitions, on a quiet machine.  Environment: RTT_COUNT
#   (round trips per pingpong and transport, 50000).  Needs root and jq.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"
MODE=skb REPS=4 SIZES=() COUNT=${RTT_COUNT:-50000}
while (($#)); do
	case $1 in
	--xdp-mode) MODE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--size) SIZES+=("$2"); shift 2 ;;
	-h | --help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) break ;;
	esac
done
(($#)) || { echo "usage: $0 [--xdp-mode skb|native] [--reps N] [--size B]... BUILD_DIR..." >&2; exit 2; }
((${#SIZES[@]})) || SIZES=(64)
[[ $MODE == skb || $MODE == native ]] || { echo "$0: --xdp-mode skb or native" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "$0: --reps takes a positive count" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }
builds=()
for arg in "$@"; do
	b=$(cd "$arg" 2>/dev/null && pwd)
	if [[ -z $b || ! -x $b/unet-bench ]]; then
		echo "$0: $arg: no unet-bench there (build it first)" >&2
		exit 2
	fi
	builds+=("$b")
done
out=$(mktemp /tmp/unet-rtt-ab.XXXXXX) || exit 1
trap 'unet_netns_cleanup; rm -f "$out"' EXIT
unet_netns_setup rttab 3 || exit 1  # three queues: --vs
in_a "${builds[0]}/unetctl" attach "$IF_A" --mode "$MODE" >/dev/null &&
	in_b "${builds[0]}/unetctl" attach "$IF_B" --mode "$MODE" >/dev/null || exit 1

# p50 BUILD TRANSPORT SIZE: one pingpong's p50 in us (empty if it failed)
p50() {
	local b=$1 t=$2 size=$3 e pp
	local u=(--transport "$t" --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B")
	local c=(--transport "$t" --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A")
	unet_bg_b taskset -c 1 "$b/unet-bench" echo "${u[@]}" --mode spin --timeout 30 >/dev/null 2>&1
	e=$UNET_BG_PID
	sleep 0.3
	pp=$(in_a taskset -c 0 "$b/unet-bench" pingpong "${c[@]}" --size "$size" --count "$COUNT" \
		--warmup 2000 --mode spin 2>/dev/null)
	unet_bg_wait "$e" 35 >/dev/null
	jq -r '.p50_us // empty' 2>/dev/null <<<"$pp"
}

# p50_vs BUILD SIZE: "raw uam" p50s (us) of one interleaved run
p50_vs() {
	local b=$1 size=$2 e pp
	unet_bg_b taskset -c 1 "$b/unet-bench" echo --transport uam --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --iface "$IF_B" --vs unet --vs-tag 4 --vs-peer-tag 3 --mode spin \
		--timeout 60 >/dev/null 2>&1
	e=$UNET_BG_PID
	sleep 0.3
	pp=$(in_a taskset -c 0 "$b/unet-bench" pingpong --transport uam --tag 1 --peer "$MAC_B" \
		--peer-tag 2 --iface "$IF_A" --vs unet --vs-tag 3 --vs-peer-tag 4 --size "$size" \
		--count "$COUNT" --warmup 2000 --mode spin 2>/dev/null)
	unet_bg_wait "$e" 65 >/dev/null
	jq -r '"\(.vs_p50_us // "nan") \(.p50_us // "nan")"' 2>/dev/null <<<"$pp"
}

has_vs() { "$1/unet-bench" --help 2>/dev/null | grep -q -- '--vs '; }
for b in "${builds[@]}"; do
	has_vs "$b" && echo "$b: interleaved (--vs)" >&2 || echo "$b: one after the other (no --vs)" >&2
done

for ((r = 1; r <= REPS; r++)); do
	for size in "${SIZES[@]}"; do
		for b in "${builds[@]}"; do
			if has_vs "$b"; then
				read -r raw uam < <(p50_vs "$b" "$size")
			else
				raw=$(p50 "$b" unet "$size")
				uam=$(p50 "$b" uam "$size")
			fi
			printf '%s %s %s %s %s\n' "$size" "$b" "$r" "${raw:-nan}" "${uam:-nan}" | tee -a "$out" >&2
		done
	done
done
echo "size build: UAM/raw p50 median [range] over $REPS; median p50 raw, UAM (us)"
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    size, b, _, raw, uam = line.split()
    if raw != "nan" and uam != "nan":
        rows.setdefault((int(size), b), []).append((float(raw), float(uam)))
for (size, b), v in sorted(rows.items()):
    ratios = [u / r for r, u in v]
    print("%5d %s: %.3fx [%.2f-%.2f]; %.2f, %.2f" % (size, b, statistics.median(ratios), min(ratios),
          max(ratios), statistics.median(r for r, _ in v), statistics.median(u for _, u in v)))
PY
