#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-txcsum-ab.sh [--reps N] [--size B] [--count N] [--transport unet-udp|unet-tcp] BUILD_DIR
#
# Transmit checksums asked of the device (AF_XDP TX metadata, the
# default where the kernel has it) against computed in software
# (--no-tx-csum-offload), alternating in one namespace pair: N pairings
# of each (default 7), one-way sink/source rate (unet-bench, batches of
# 32, receiver on CPU 1, sender on CPU 0), on then off, so that both see
# the same state of a shared machine.  Prints one line per pairing and
# then the medians, their ratio and the sender's CPU per message:
#
#   txcsum TRANSPORT SIZE B: device MSGS/s (CPU us/msg) software MSGS/s (CPU us/msg) = RATIOx
#
# The table rows of make bench (scripts/bench.sh, unet-udp-sw and
# unet-tcp-sw) run the two one after the other; this is the closer
# comparison.  Needs root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"

REPS=7 SIZE=1472 COUNT="" TP=unet-udp BUILD=""
while (($#)); do
	case $1 in
	--reps) REPS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--count) COUNT=$2; shift 2 ;;
	--transport) TP=$2; shift 2 ;;
	-h | --help) sed -n '4,5p' "$0"; exit 0 ;;
	*) BUILD=$1; shift ;;
	esac
done
[[ -n $BUILD && $TP =~ ^unet-(udp|tcp)$ ]] || { sed -n '4,5p' "$0" >&2; exit 2; }
[[ -z $COUNT ]] && { [[ $TP == unet-udp ]] && COUNT=300000 || COUNT=200000; }
BUILD=$(cd "$BUILD" && pwd) || exit 2
[[ $(id -u) -eq 0 ]] || { echo "bench-txcsum-ab: needs root" >&2; exit 1; }
tmp=$(mktemp -d /tmp/unet-txcsum-ab.XXXXXX) || exit 1
trap 'unet_netns_cleanup; rm -rf "$tmp"' EXIT

unet_netns_setup txab || exit 1
in_a "$BUILD/unetctl" attach "$IF_A" --mode skb >/dev/null &&
	in_b "$BUILD/unetctl" attach "$IF_B" --mode skb >/dev/null || exit 1
in_a ip addr add 10.78.0.1/24 dev "$IF_A"
in_b ip addr add 10.78.0.2/24 dev "$IF_B"

# one ARG...: one pairing with the extra unet-bench options ARG...;
# prints "MSGS_PER_S SENDER_CPU_US_PER_MSG DEVICE_USED".
one() {
	local s i
	unet_bg_b taskset -c 1 "$BUILD/unet-bench" sink --transport "$TP" --iface "$IF_B" \
		--local 10.78.0.2:9000 --remote 10.78.0.1:9001 --xdp-mode skb --size "$SIZE" \
		--mode spin --idle-ms 500 --timeout 60 "$@" >"$tmp/sink" 2>"$tmp/sink.err"
	s=$UNET_BG_PID
	for ((i = 0; i < 100; i++)); do
		grep -q ' ready$' "$tmp/sink.err" && break
		sleep 0.05
	done
	in_a taskset -c 0 "$BUILD/unet-bench" source --transport "$TP" --iface "$IF_A" \
		--local 10.78.0.1:9001 --remote 10.78.0.2:9000 --xdp-mode skb --size "$SIZE" \
		--count "$COUNT" --batch 32 --timeout 60 "$@" >"$tmp/src" 2>"$tmp/src.err"
	unet_bg_wait "$s" 30 >/dev/null
	printf '%s %s %s\n' "$(jq -r '.msgs_per_s // "-"' "$tmp/sink" 2>/dev/null)" \
		"$(jq -r '.cpu_us_per_msg // "-"' "$tmp/src" 2>/dev/null)" \
		"$(jq -r '.tx_csum_offload // "-"' "$tmp/src" 2>/dev/null)"
}

: >"$tmp/on"
: >"$tmp/off"
for ((r = 1; r <= REPS; r++)); do
	on=$(one)
	off=$(one --no-tx-csum-offload)
	echo "pairing $r: device $on  software $off"
	echo "$on" >>"$tmp/on"
	echo "$off" >>"$tmp/off"
done
# median FILE COLUMN
median() { awk -v c="$2" '$c != "-" { print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
mon=$(median "$tmp/on" 1) moff=$(median "$tmp/off" 1)
con=$(median "$tmp/on" 2) coff=$(median "$tmp/off" 2)
used=$(awk '{ print $3 }' "$tmp/on" | sort -u | tr '\n' ' ')
awk -v t="$TP" -v s="$SIZE" -v a="$mon" -v b="$moff" -v ca="$con" -v cb="$coff" -v u="$used" 'BEGIN {
	printf "txcsum %s %s B: device %s msgs/s (%s us/msg) software %s msgs/s (%s us/msg) = %s (device used: %s)\n",
		t, s, a, ca, b, cb, (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2fx", a / b) : "-", u
}'
