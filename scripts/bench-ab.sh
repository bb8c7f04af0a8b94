#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-ab.sh BUILD_DIR... - the same few U-Net figures for several builds,
# alternating, in fresh namespaces each time: the 64-byte round trip
# (spinning, p50) beside kernel UDP's in the same namespaces, and the
# 64-byte one-way rate (sink/source, batches of 32).  For checking that a
# change costs nothing: build the old tree elsewhere (git worktree add
# /tmp/old COMMIT && make -C /tmp/old) and run
#     scripts/bench-ab.sh /tmp/old/build build build /tmp/old/build
# Figures move 10-50 % between runs on a shared VM: compare medians of
# several alternations on a quiet machine.  Needs root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"
(($#)) || { echo "usage: $0 BUILD_DIR..." >&2; exit 2; }
tmp=$(mktemp /tmp/unet-ab.XXXXXX) || exit 1
trap 'unet_netns_cleanup; rm -f "$tmp"' EXIT
json() { jq -r "$1" 2>/dev/null <<<"$2"; }
for b in "$@"; do
	b=$(cd "$b" && pwd) || exit 2
	unet_netns_setup ab || exit 1
	in_a "$b/unetctl" attach "$IF_A" --mode skb >/dev/null &&
		in_b "$b/unetctl" attach "$IF_B" --mode skb >/dev/null || exit 1
	in_a ip addr add 10.77.0.1/24 dev "$IF_A"
	in_b ip addr add 10.77.0.2/24 dev "$IF_B"
	u=(--transport unet --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B")
	c=(--transport unet --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A")
	unet_bg_b taskset -c 1 "$b/unet-bench" echo "${u[@]}" --mode spin --timeout 20 >/dev/null 2>&1
	e=$UNET_BG_PID
	sleep 0.3
	pp=$(in_a taskset -c 0 "$b/unet-bench" pingpong "${c[@]}" --size 64 --count 20000 --warmup 2000 --mode spin 2>/dev/null)
	unet_bg_wait "$e" 25 >/dev/null
	unet_bg_b taskset -c 1 "$b/unet-bench" echo --transport udp --local 10.77.0.2:9000 \
		--remote 10.77.0.1:9001 --mode spin --timeout 20 >/dev/null 2>&1
	e=$UNET_BG_PID
	sleep 0.3
	ku=$(in_a taskset -c 0 "$b/unet-bench" pingpong --transport udp --local 10.77.0.1:9001 \
		--remote 10.77.0.2:9000 --size 64 --count 20000 --warmup 2000 --mode spin 2>/dev/null)
	unet_bg_wait "$e" 25 >/dev/null
	unet_bg_b taskset -c 1 "$b/unet-bench" sink "${u[@]}" --size 64 --mode spin --idle-ms 500 --timeout 20 >"$tmp" 2>/dev/null
	s=$UNET_BG_PID
	sleep 0.3
	in_a taskset -c 0 "$b/unet-bench" source "${c[@]}" --size 64 --count 500000 --batch 32 >/dev/null 2>&1
	unet_bg_wait "$s" 25 >/dev/null
	printf '%s  unet_rtt_p50_us %s  udp_rtt_p50_us %s  unet_rate_msgs_s %s\n' "$b" \
		"$(json .p50_us "$pp")" "$(json .p50_us "$ku")" "$(json .msgs_per_s "$(cat "$tmp")")"
	unet_netns_cleanup
done
