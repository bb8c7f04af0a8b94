#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-bulk-ab.sh [--xdp-mode skb|native] [--reps N] BUILD_DIR... - UAM
# bulk against raw U-Net streaming for several builds, alternating, in
# fresh namespaces each time: per build and repetition, raw U-Net 1472-byte
# streaming (sink/source, batches of 32, as `make bench`'s `rate unet 1472`),
# then UAM bulk stores (`bulk uam`: 50 stores of 4 MiB, 2 in flight) and
# gets (`bulk-get uam`, the same amount from the peer's memory) at 0% and
# at 1% loss injected on both interfaces, each with its ratio to the raw
# figure of the same repetition.  The same commands as scripts/bench.sh
# runs for those rows, with their UAM counters (acks, retransmits,
# timeouts, credit stalls) from the sender's log.  For a change to UAM's
# bulk path: build the old tree elsewhere and run
#     scripts/bench-bulk-ab.sh --reps 3 /tmp/old/build build
# Environment: BULK_COUNT (stores or gets per row, 50), BULK_BYTES (4 MiB),
# RAW_COUNT (raw messages, 600000).  Figures move between runs on a shared
# VM: compare the ratios, several
# alternations.  Needs root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"
MODE=skb REPS=1 COUNT=${BULK_COUNT:-50} BYTES=${BULK_BYTES:-4194304} RAW_COUNT=${RAW_COUNT:-600000}
while (($#)); do
	case $1 in
	--xdp-mode) MODE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	*) break ;;
	esac
done
(($#)) || { echo "usage: $0 [--xdp-mode skb|native] [--reps N] BUILD_DIR..." >&2; exit 2; }
tmp=$(mktemp -d /tmp/unet-bulk-ab.XXXXXX) || exit 1
trap 'unet_netns_cleanup; rm -rf "$tmp"' EXIT
json() { jq -r "$1" 2>/dev/null <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "") printf "%.2f", a / b; else print "-" }'; }

# bulk BUILD LOSS_PPM [--bulk-get]: one bulk row; prints "gbit_s|counters".
bulk() {
	local b=$1 ppm=$2 e g get=("${@:3}")
	in_a "$b/unetctl" fault "$IF_A" --drop-ppm "$ppm" >/dev/null
	in_b "$b/unetctl" fault "$IF_B" --drop-ppm "$ppm" >/dev/null
	unet_bg_b taskset -c 1 "$b/unet-bench" echo "${u[@]}" --bulk-bytes "$BYTES" --mode spin \
		--timeout 65 >/dev/null 2>"$tmp/srv.err"
	e=$UNET_BG_PID
	sleep 0.3
	g=$(in_a taskset -c 0 "$b/unet-bench" bulk "${c[@]}" --bulk-bytes "$BYTES" --count "$COUNT" \
		--batch 2 "${get[@]}" --timeout 60 2>"$tmp/cli.err")
	kill -TERM "$e" 2>/dev/null
	unet_bg_wait "$e" 10 >/dev/null
	in_a "$b/unetctl" fault "$IF_A" --drop-ppm 0 >/dev/null
	in_b "$b/unetctl" fault "$IF_B" --drop-ppm 0 >/dev/null
	printf '%s|%s' "$(json .gbit_s "$g")" \
		"$(grep -o 'tx [0-9].*' "$tmp/cli.err" | tail -n 1) // rx side: $(grep -o 'acks [0-9]*' "$tmp/srv.err" | tail -n 1)"
}

for ((rep = 1; rep <= REPS; rep++)); do
	for b in "$@"; do
		b=$(cd "$b" && pwd) || exit 2
		unet_netns_setup bab || exit 1
		in_a "$b/unetctl" attach "$IF_A" --mode "$MODE" >/dev/null &&
			in_b "$b/unetctl" attach "$IF_B" --mode "$MODE" >/dev/null || exit 1
		u=(--transport uam --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B" --xdp-mode "$MODE")
		c=(--transport uam --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A" --xdp-mode "$MODE")
		r=(--transport unet --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B" --xdp-mode "$MODE")
		s=(--transport unet --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A" --xdp-mode "$MODE")
		unet_bg_b taskset -c 1 "$b/unet-bench" sink "${r[@]}" --size 1472 --batch 32 --mode spin \
			--idle-ms 500 --timeout 30 >"$tmp/sink" 2>/dev/null
		e=$UNET_BG_PID
		sleep 0.3
		in_a taskset -c 0 "$b/unet-bench" source "${s[@]}" --size 1472 --count "$RAW_COUNT" --batch 32 \
			--timeout 30 >/dev/null 2>&1
		unet_bg_wait "$e" 15 >/dev/null
		raw=$(json .gbit_s "$(grep '^{' "$tmp/sink" | tail -n 1)")
		b0=$(bulk "$b" 0)
		b1=$(bulk "$b" 10000)
		g0=$(bulk "$b" 0 --bulk-get)
		g1=$(bulk "$b" 10000 --bulk-get)
		printf '%s rep %d %s: raw %s Gbit/s | store %s %sx, 1%% loss %s %sx | get %s %sx, 1%% loss %s %sx\n' \
			"$b" "$rep" "$MODE" "$raw" "${b0%%|*}" "$(ratio "${b0%%|*}" "$raw")" \
			"${b1%%|*}" "$(ratio "${b1%%|*}" "$raw")" "${g0%%|*}" "$(ratio "${g0%%|*}" "$raw")" \
			"${g1%%|*}" "$(ratio "${g1%%|*}" "$raw")"
		printf '    store 0%%: %s\n    store 1%%: %s\n    get 0%%: %s\n    get 1%%: %s\n' \
			"${b0#*|}" "${b1#*|}" "${g0#*|}" "${g1#*|}"
		unet_netns_cleanup
	done
done
