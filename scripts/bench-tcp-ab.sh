#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-tcp-ab.sh [-n COUNT] BUILD_DIR... - single-connection TCP bulk
# throughput (1472-byte messages, unet-bench sink/source) for several
# builds, alternating, in fresh namespaces each time, in all four
# pairings of sender -> receiver: kernel -> kernel (the reference),
# U-Net -> U-Net, U-Net -> kernel and kernel -> U-Net, each with its
# ratio to kernel -> kernel of the same round.  For checking a TCP change
# (docs/tcp.md, "What limits bulk"):
#     git worktree add /tmp/old COMMIT && make -C /tmp/old
#     scripts/bench-tcp-ab.sh /tmp/old/build build build /tmp/old/build
# Figures move 10-50 % between runs on a shared VM: compare medians of
# several alternations.  The mixed pairings run with the kernel's
# checksum offload off, which also turns off its TSO (kernel -> kernel is
# measured both ways): builds before the TCP layer took partial
# checksums (docs/tcp.md, "Checksums") needed it, and it keeps the
# figures comparable with the older ones.  Needs root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/netns.sh
source "$HERE/netns.sh"
COUNT=200000
if [[ ${1:-} == -n ]]; then
	COUNT=$2
	shift 2
fi
(($#)) || { echo "usage: $0 [-n COUNT] BUILD_DIR..." >&2; exit 2; }
tmp=$(mktemp /tmp/unet-tcp-ab.XXXXXX) || exit 1
trap 'unet_netns_cleanup; rm -f "$tmp" "$tmp.err"' EXIT
A=10.78.0.1 B=10.78.0.2
# one SENDER RECEIVER: Gbit/s of COUNT 1472-byte messages, sender in
# namespace a, receiver (sink) in b; "-" if the run failed.
one() {
	local b=$1 snd=$2 rcv=$3 s
	local sa=(--transport tcp --local "$A:9101" --remote "$B:9100")
	local ra=(--transport tcp --local "$B:9100" --remote "$A:9101")
	[[ $snd == unet ]] && sa=(--transport unet-tcp --iface "$IF_A" --xdp-mode skb --local "$A:9101" --remote "$B:9100")
	[[ $rcv == unet ]] && ra=(--transport unet-tcp --iface "$IF_B" --xdp-mode skb --local "$B:9100" --remote "$A:9101")
	unet_bg_b "$b/unet-bench" sink "${ra[@]}" --size 1472 --mode spin --cpu 1 --idle-ms 500 \
		--timeout 30 >"$tmp" 2>"$tmp.err"
	s=$UNET_BG_PID
	sleep 0.4
	in_a timeout 30 "$b/unet-bench" source "${sa[@]}" --size 1472 --count "$COUNT" --cpu 0 \
		--timeout 25 >/dev/null 2>&1
	unet_bg_wait "$s" 15 >/dev/null
	jq -r '.gbit_s // empty' "$tmp" 2>/dev/null | grep . || echo -
}
ratio() {
	if [[ $1 == - || $2 == - ]]; then
		echo -
	else
		awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'
	fi
}
for b in "$@"; do
	b=$(cd "$b" && pwd) || exit 2
	unet_netns_setup "tab$$" || exit 1
	in_a "$b/unetctl" attach "$IF_A" --mode skb >/dev/null &&
		in_b "$b/unetctl" attach "$IF_B" --mode skb >/dev/null || exit 1
	in_a ip addr add "$A/24" dev "$IF_A"
	in_b ip addr add "$B/24" dev "$IF_B"
	kk=$(one "$b" kernel kernel)
	uu=$(one "$b" unet unet)
	# lwIP checks every checksum: a kernel peer must send complete ones
	# (veth otherwise leaves them partial), which also turns off its
	# TSO; kernel -> kernel again without offloads, for comparison.
	in_a ethtool -K "$IF_A" tx off >/dev/null 2>&1
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	k0=$(one "$b" kernel kernel)
	uk=$(one "$b" unet kernel)
	ku=$(one "$b" kernel unet)
	printf '%s  k->k %s  u->u %s (%s)  u->k %s (%s)  k->u %s (%s)  k->k,tx-off %s (%s) Gbit/s (ratio to k->k)\n' \
		"$b" "$kk" "$uu" "$(ratio "$uu" "$kk")" "$uk" "$(ratio "$uk" "$kk")" "$ku" "$(ratio "$ku" "$kk")" \
		"$k0" "$(ratio "$k0" "$kk")"
	unet_netns_cleanup
done
