#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-jumbo.sh [--xdp-mode skb|native] [--reps N] BUILD_DIR - UAM bulk
# against raw U-Net streaming at MTU 9000 and at MTU 1500, in fresh
# namespaces each time (`make bench` runs it).  Per MTU and repetition:
# raw U-Net streaming (sink/source, batches of 32) of the largest message
# the link takes at 9000 (8992 bytes: one frame in pieces) or of 1472
# bytes at 1500 (as `make bench`'s `rate unet 1472`), then UAM bulk
# stores and gets (BULK_COUNT of BULK_BYTES, 2 in flight, in frames of
# the endpoint's max_payload) with their ratio to the raw figure of the
# same repetition (target at 9000: >= 0.9x).  Prints one line per
# repetition and MTU.  Environment: BULK_COUNT (20), BULK_BYTES (4 MiB),
# RAW_BYTES (bytes each raw run streams, 400 MB).  Figures move between
# runs on a shared VM: compare ratios of one run.  Needs root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"
MODE=skb REPS=1 COUNT=${BULK_COUNT:-20} BYTES=${BULK_BYTES:-4194304} RAW_BYTES=${RAW_BYTES:-400000000}
while (($#)); do
	case $1 in
	--xdp-mode) MODE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	*) break ;;
	esac
done
(($# == 1)) || { echo "usage: $0 [--xdp-mode skb|native] [--reps N] BUILD_DIR" >&2; exit 2; }
b=$(cd "$1" && pwd) || exit 2
[[ -x $b/unet-bench && -x $b/unetctl ]] || { echo "bench-jumbo: $b/unet-bench or unetctl missing: run make" >&2; exit 2; }
tmp=$(mktemp -d /tmp/unet-bench-jumbo.XXXXXX) || exit 1
trap 'unet_netns_cleanup; rm -rf "$tmp"' EXIT
json() { jq -r "$1" 2>/dev/null <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "") printf "%.2f", a / b; else print "-" }'; }

# bulk [--bulk-get]: one UAM bulk run; prints its Gbit/s.
bulk() {
	local e g
	unet_bg_b taskset -c 1 "$b/unet-bench" echo "${u[@]}" --bulk-bytes "$BYTES" --mode spin \
		--timeout 65 >/dev/null 2>"$tmp/srv.err"
	e=$UNET_BG_PID
	sleep 0.3
	g=$(in_a taskset -c 0 "$b/unet-bench" bulk "${c[@]}" --bulk-bytes "$BYTES" --count "$COUNT" \
		--batch 2 "$@" --timeout 60 2>"$tmp/cli.err")
	kill -TERM "$e" 2>/dev/null
	unet_bg_wait "$e" 10 >/dev/null
	json .gbit_s "$g"
}

echo "bench-jumbo: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), XDP $MODE mode"
for ((rep = 1; rep <= REPS; rep++)); do
	for mtu in 9000 1500; do
		size=$((mtu == 1500 ? 1472 : mtu - 8))
		unet_netns_setup bjm || exit 1
		in_a ip link set "$IF_A" mtu "$mtu" && in_b ip link set "$IF_B" mtu "$mtu" || exit 1
		in_a "$b/unetctl" attach "$IF_A" --mode "$MODE" >/dev/null &&
			in_b "$b/unetctl" attach "$IF_B" --mode "$MODE" >/dev/null || exit 1
		u=(--transport uam --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B" --xdp-mode "$MODE")
		c=(--transport uam --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A" --xdp-mode "$MODE")
		r=(--transport unet --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B" --xdp-mode "$MODE")
		s=(--transport unet --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A" --xdp-mode "$MODE")
		unet_bg_b taskset -c 1 "$b/unet-bench" sink "${r[@]}" --size "$size" --batch 32 --mode spin \
			--idle-ms 500 --timeout 30 >"$tmp/sink" 2>/dev/null
		e=$UNET_BG_PID
		sleep 0.3
		in_a taskset -c 0 "$b/unet-bench" source "${s[@]}" --size "$size" --count $((RAW_BYTES / size)) \
			--batch 32 --timeout 30 >/dev/null 2>"$tmp/src.err"
		unet_bg_wait "$e" 15 >/dev/null
		raw=$(json .gbit_s "$(grep '^{' "$tmp/sink" | tail -n 1)")
		st=$(bulk)
		gt=$(bulk --bulk-get)
		printf 'MTU %d rep %d: raw U-Net %d B %s Gbit/s | UAM store %s Gbit/s %sx | UAM get %s Gbit/s %sx\n' \
			"$mtu" "$rep" "$size" "${raw:--}" "${st:--}" "$(ratio "$st" "$raw")" "${gt:--}" "$(ratio "$gt" "$raw")"
		unet_netns_cleanup
	done
done
