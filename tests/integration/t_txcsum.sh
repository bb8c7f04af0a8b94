# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_txcsum.sh - transmit checksums computed by the device or the kernel
# (AF_XDP TX metadata, lib/core/txmd.c; docs/platform.md) for UDP and TCP
# over U-Net, against kernel sockets and U-Net receivers.  Sourced by
# run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"txcsum_udp|xdp|90|U-Net UDP client -> kernel echo, 1..1472 bytes byte for byte, with tx checksum offload (default) and without: every datagram counted offloaded or not, the receiving kernel sees each checksum complete or CHECKSUM_PARTIAL (offload on: partial, off: complete); U-Net -> U-Net with offload: the receiver takes the partial checksums; a kernel without TX metadata skips"
	"txcsum_tcp|-|60|TCP over U-Net on an endpoint with room for TX metadata (frames further into their buffers) and on one without: U-Net client -> kernel echo, every write size 1..2048 then sampled to 16 KiB, byte for byte, every segment's checksum complete at the kernel"
)

CSUM_CAPTURE=$ROOT/tests/tools/csum-capture.py

# capstat LOG KEY: a count from the "capture" line csum-capture.py printed.
capstat() {
	sed -n "s/^capture.* $2=\([0-9]*\).*/\1/p" "$1" | tail -1
}

# txcsum_need_kernel WHAT: the endpoint did not get TX metadata.  A
# kernel before 6.11 has none (skip); a later one must have it (fail).
txcsum_need_kernel() {
	local v major minor
	v=$(uname -r)
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%[!0-9]*}
	if ((major < 6 || (major == 6 && minor < 11))); then
		skip "no AF_XDP TX metadata before Linux 6.11 (this is $v): $1"
	fi
	fail "Linux $v has AF_XDP TX metadata, yet the endpoint does not use it: $1"
}

# txcsum_udpstat LOG KEY: a counter from unet-udp's "udpstats" line.
txcsum_udpstat() {
	sed -n "s/^udpstats.* $2=\([0-9]*\).*/\1/p" "$1" | tail -1
}

# One round: U-Net sizes client on a (extra unet-udp options in $2...)
# against a kernel echo on b, captured on b.  $1 names the round.
txcsum_udp_round() {
	local name=$1 max=1472 pid cpid
	shift
	unet_bg_b python3 "$CSUM_CAPTURE" "$IF_B" udp 7100 --timeout 60 >"$T_DIR/cap_$name.log" 2>&1
	cpid=$UNET_BG_PID
	wait_log 10 "$T_DIR/cap_$name.log" '^ready'
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 60 >"$T_DIR/kecho_$name.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho_$name.log" "$pid" >/dev/null
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7101" --remote "$IP_B:7100" --max $max \
		--xdp-mode "$T_MODE" --timeout 50 "$@" >"$T_DIR/usizes_$name.log" 2>&1
	cat "$T_DIR/usizes_$name.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/usizes_$name.log" ||
		fail "$name: U-Net client -> kernel echo failed"
	stop "$pid" "$T_DIR/kecho_$name.log" "kernel echo"
	# The kernel socket drops a datagram whose checksum is wrong: every
	# size echoed proves each one right (or legitimately partial).
	grep -qx "echo echoed=$max" "$T_DIR/kecho_$name.log" ||
		fail "$name: the kernel echo did not receive exactly $max datagrams"
	stop "$cpid" "$T_DIR/cap_$name.log" "capture"
}

t_txcsum_udp() {
	setup_ns
	attach a
	local on off
	txcsum_udp_round on
	grep -q "tx_csum_offload=1" "$T_DIR/usizes_on.log" ||
		txcsum_need_kernel "$(grep '^ready' "$T_DIR/usizes_on.log")"
	on=$(txcsum_udpstat "$T_DIR/usizes_on.log" tx_csum_offload)
	((on == $(txcsum_udpstat "$T_DIR/usizes_on.log" tx))) ||
		fail "offload on: $on of $(txcsum_udpstat "$T_DIR/usizes_on.log" tx) datagrams offloaded"
	# veth hands the kernel the skb as the AF_XDP copy made it: partial.
	# (A capture socket may miss frames under load: each one it saw
	# counts.)
	local seen
	seen=$(capstat "$T_DIR/cap_on.log" frames)
	((seen > 0 && $(capstat "$T_DIR/cap_on.log" partial) == seen)) ||
		fail "offload on: the receiving kernel did not see every datagram as CHECKSUM_PARTIAL"

	txcsum_udp_round off --no-tx-csum-offload
	grep -q "tx_csum_offload=0" "$T_DIR/usizes_off.log" || fail "offload off: the endpoint still uses it"
	off=$(txcsum_udpstat "$T_DIR/usizes_off.log" tx_csum_offload)
	((off == 0)) || fail "offload off: $off datagrams offloaded"
	seen=$(capstat "$T_DIR/cap_off.log" frames)
	((seen > 0 && $(capstat "$T_DIR/cap_off.log" full) == seen)) ||
		fail "offload off: not every datagram captured had a complete checksum"

	# U-Net to U-Net: b's UDP layer takes the partial checksums (veth:
	# the default policy accepts them), and its echoes are offloaded too.
	attach b
	local pid
	unet_bg_b "$UUDP" echo "$IF_B" --local "$IP_B:7200" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7201" --remote "$IP_B:7200" --max 1472 \
		--xdp-mode "$T_MODE" --timeout 50 >"$T_DIR/usizes_unet.log" 2>&1
	cat "$T_DIR/usizes_unet.log"
	grep -qx "sizes ok 1..1472" "$T_DIR/usizes_unet.log" || fail "U-Net -> U-Net echo failed"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	(($(txcsum_udpstat "$T_DIR/uecho.log" partial) >= 1472)) ||
		fail "the U-Net receiver did not count the partial checksums it took"
	(($(txcsum_udpstat "$T_DIR/usizes_unet.log" partial) >= 1472)) ||
		fail "the U-Net client did not take the echoes' partial checksums"
	(($(txcsum_udpstat "$T_DIR/uecho.log" tx_csum_offload) == 1472)) ||
		fail "the U-Net echo's replies were not offloaded"
}

# TCP keeps lwIP's checksums (Debian's lwIP computes them whatever the
# interface offers): what changes with TX metadata is where frames sit in
# their buffers.  Both layouts against a kernel echo, captured.
t_txcsum_tcp() {
	local utcp=$BUILD/tools/unet-tcp tpeer=$ROOT/tests/tools/tcp-peer.py
	export T_MODE=native
	setup_ns
	attach a
	local name opt pid cpid port=6000 seen
	for name in on off; do
		opt=()
		[[ $name == off ]] && opt=(--no-tx-csum-offload)
		unet_bg_b python3 "$CSUM_CAPTURE" "$IF_B" tcp $port --timeout 50 >"$T_DIR/cap_$name.log" 2>&1
		cpid=$UNET_BG_PID
		wait_log 10 "$T_DIR/cap_$name.log" '^ready'
		unet_bg_b python3 "$tpeer" echo "$IP_B:$port" --conns 1 >"$T_DIR/kecho_$name.log" 2>&1
		pid=$UNET_BG_PID
		wait_ready "$T_DIR/kecho_$name.log" "$pid" >/dev/null
		in_a "$utcp" "$IF_A" --local "$IP_A" --xdp-mode native --timeout 40 "${opt[@]}" \
			sizes --remote "$IP_B:$port" --max 16384 >"$T_DIR/usizes_$name.log" 2>&1 ||
			{ cat "$T_DIR/usizes_$name.log"; fail "$name: U-Net sizes against the kernel echo failed"; }
		cat "$T_DIR/usizes_$name.log"
		grep -q "^sizes ok .* sizes 1..16384" "$T_DIR/usizes_$name.log" ||
			fail "$name: not every size was checked"
		finish "$pid" "$T_DIR/kecho_$name.log" 10 "kernel echo"
		stop "$cpid" "$T_DIR/cap_$name.log" "capture"
		seen=$(capstat "$T_DIR/cap_$name.log" frames)
		# lwIP's checksums, complete whatever the endpoint has.
		((seen > 0 && $(capstat "$T_DIR/cap_$name.log" full) == seen)) ||
			fail "$name: not every TCP segment captured had a complete checksum"
		port=$((port + 1))
	done
	grep -q "^endpoint tx_csum_offload=0" "$T_DIR/usizes_off.log" ||
		fail "--no-tx-csum-offload: the endpoint still has TX metadata"
	grep -q "^endpoint tx_csum_offload=1" "$T_DIR/usizes_on.log" ||
		txcsum_need_kernel "$(grep '^endpoint' "$T_DIR/usizes_on.log")"
}
