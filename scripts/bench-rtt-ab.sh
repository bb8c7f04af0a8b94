#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-rtt-ab.sh [--xdp-mode skb|native] [--routable] [--reps N] [--size B]... [--json] BUILD_DIR...
#   UAM's spinning round trip against raw U-Net's, for several builds,
#   alternating: per repetition, size and build, a raw U-Net pingpong and
#   then a UAM one (unet-bench pingpong against a spinning echo, client on
#   CPU 0 and echo on CPU 1, as `make bench` runs them), and the ratio of
#   their p50s.  One pair of namespaces for the whole run.  At the end, per
#   size and build: the median of the per-repetition ratios, their range,
#   and the median p50s (--json: a JSON line each, with size, build, runs,
#   p50_ratio, p50_ratio_min, p50_ratio_max, vs_p50_us (raw), p50_us
#   (UAM)).  For a change to UAM's message path: build the
#   old tree elsewhere (git worktree add /tmp/old COMMIT && make -C /tmp/old)
#   and run
#       scripts/bench-rtt-ab.sh --reps 8 --size 64 --size 1472 /tmp/old/build build
#   Single p50s of 3-4 us move by 5-30% between runs on a shared VM (and
#   by up to 2x between two processes a second apart): where a build's
#   unet-bench has --vs, UAM and raw U-Net run interleaved in one process
#   pair (blocks of 1000 round trips) and their ratio is that run's
#   p50_ratio; an older build runs them one after the other.  Compare over
#   several repetitions, on a quiet machine.  --routable: a routable
#   channel's round trip (raw U-Net inside UDP/IPv4, unet-bench --peer-ip)
#   in UAM's place, against a raw channel's the same way (builds with --vs
#   only), and in each repetition a raw channel against a raw one the
#   same way (aa_ratio): the two sides' own difference (in skb mode the
#   first transport's queue was the slower one, 1.07x-1.08x raw against
#   raw here; in native mode 1.00x-1.02x), which p50_ratio_net divides
#   out.  Environment: RTT_COUNT
#   (round trips per pingpong and transport, 50000).  Needs root, jq and python3.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"
MODE=skb REPS=4 SIZES=() JSON=0 COUNT=${RTT_COUNT:-50000} ROUTABLE=0
while (($#)); do
	case $1 in
	--xdp-mode) MODE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--size) SIZES+=("$2"); shift 2 ;;
	--json) JSON=1; shift ;;
	--routable) ROUTABLE=1; shift ;;
	-h | --help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) break ;;
	esac
done
(($#)) || { echo "usage: $0 [--xdp-mode skb|native] [--reps N] [--size B]... [--json] BUILD_DIR..." >&2; exit 2; }
((${#SIZES[@]})) || SIZES=(64)
[[ $MODE == skb || $MODE == native ]] || { echo "$0: --xdp-mode skb or native" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "$0: --reps takes a positive count" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }
command -v python3 >/dev/null || { echo "$0: needs python3 (scripts/install-deps.sh installs it)" >&2; exit 2; }
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

# pingpong BUILD TRANSPORT SIZE [--vs [--aa]]: one pingpong against a spinning
# echo, on queue 0; its JSON line (empty if it failed).  --vs: raw U-Net
# beside it in the same run (tags 3 and 4, on queues 1-2).  Without --vs
# the queue is given, as an endpoint otherwise binds all three and UAM's
# window no longer fits one queue's share of the receive buffers.  --aa
# (--routable): the first channel raw as well.
pingpong() {
	local b=$1 t=$2 size=$3 e to=30
	local u=(--transport "$t" --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B")
	local c=(--transport "$t" --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A")
	if ((ROUTABLE)) && [[ $t == unet && ${5:-} != --aa ]]; then
		# the first transport's channel routable, --vs's raw
		u+=(--peer-ip "$IP_A")
		c+=(--peer-ip "$IP_B")
	fi
	if [[ ${4:-} == --vs ]]; then
		u+=(--vs unet --vs-tag 4 --vs-peer-tag 3)
		c+=(--vs unet --vs-tag 3 --vs-peer-tag 4)
		to=60
	else
		u+=(--queue-mask 1)
		c+=(--queue-mask 1)
	fi
	unet_bg_b taskset -c 1 "$b/unet-bench" echo "${u[@]}" --mode spin --timeout "$to" >/dev/null 2>&1
	e=$UNET_BG_PID
	sleep 0.3
	in_a taskset -c 0 "$b/unet-bench" pingpong "${c[@]}" --size "$size" --count "$COUNT" \
		--warmup 2000 --mode spin 2>/dev/null
	unet_bg_wait "$e" $((to + 5)) >/dev/null
}

# Which builds have --vs (asked once each).
vs=()
for b in "${builds[@]}"; do
	if "$b/unet-bench" --help 2>/dev/null | grep -q -- '--vs '; then
		vs+=(1)
		echo "$b: interleaved (--vs)" >&2
	else
		vs+=(0)
		echo "$b: one after the other (no --vs)" >&2
	fi
done

for ((r = 1; r <= REPS; r++)); do
	for size in "${SIZES[@]}"; do
		for i in "${!builds[@]}"; do
			b=${builds[i]}
			aa=nan
			if ((ROUTABLE && !vs[i])); then
				raw='' uam='' # a build without --vs has no --peer-ip either
			elif ((vs[i])); then
				read -r raw uam < <(pingpong "$b" "$( ((ROUTABLE)) && echo unet || echo uam)" "$size" --vs |
					jq -r '"\(.vs_p50_us // "nan") \(.p50_us // "nan")"' 2>/dev/null)
				if ((ROUTABLE)); then
					aa=$(pingpong "$b" unet "$size" --vs --aa | jq -r '.p50_ratio // "nan"' 2>/dev/null)
				fi
			else
				raw=$(pingpong "$b" unet "$size" | jq -r '.p50_us // empty' 2>/dev/null)
				uam=$(pingpong "$b" uam "$size" | jq -r '.p50_us // empty' 2>/dev/null)
			fi
			printf '%s %s %s %s %s %s\n' "$size" "$b" "$r" "${raw:-nan}" "${uam:-nan}" "${aa:-nan}" | tee -a "$out" >&2
		done
	done
done
((JSON)) || echo "size build: $( ((ROUTABLE)) && echo routable || echo UAM)/raw p50 median [range] over $REPS; median p50 raw, $( ((ROUTABLE)) && echo routable || echo UAM) (us)"
python3 - "$out" "$JSON" <<'PY'
import json, statistics, sys
rows, aas = {}, {}
for line in open(sys.argv[1]):
    size, b, _, raw, uam, aa = line.split()
    if raw != "nan" and uam != "nan":
        rows.setdefault((int(size), b), []).append((float(raw), float(uam)))
    if aa != "nan":
        aas.setdefault((int(size), b), []).append(float(aa))
for (size, b), v in sorted(rows.items()):
    ratios = [u / r for r, u in v]
    med, raw, uam = (statistics.median(ratios), statistics.median(r for r, _ in v),
                     statistics.median(u for _, u in v))
    aa = statistics.median(aas[(size, b)]) if aas.get((size, b)) else None
    if sys.argv[2] == "1":
        rec = {"size": size, "build": b, "runs": len(v), "p50_ratio": round(med, 3),
               "p50_ratio_min": round(min(ratios), 3), "p50_ratio_max": round(max(ratios), 3),
               "vs_p50_us": raw, "p50_us": uam}
        if aa:
            rec.update(aa_ratio=round(aa, 3), p50_ratio_net=round(med / aa, 3))
        print(json.dumps(rec))
    else:
        print("%5d %s: %.3fx [%.2f-%.2f]; %.2f, %.2f%s" % (size, b, med, min(ratios), max(ratios), raw, uam,
              "; raw/raw %.3fx, net %.3fx" % (aa, med / aa) if aa else ""))
PY
