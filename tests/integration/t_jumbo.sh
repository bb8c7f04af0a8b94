# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_jumbo.sh - frames larger than one chunk: the program attached at a
# jumbo MTU, raw U-Net messages in several pieces both ways, links of
# different MTUs.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"jumbo_attach|xdp|60|the program attaches at MTU 9000 on veth (a program without fragment support cannot, natively), and frames still reach the kernel beside it"
	"jumbo_sizes|xdp|120|MTU 9000: max_payload 8992; raw U-Net messages of the sizes around one chunk, two and three chunks and the largest, both directions, byte for byte; max + 1 refused"
	"jumbo_routable|xdp|90|MTU 9000, a routable channel: its max_payload is one send buffer's (frames in pieces are raw U-Net only), every size from 1700 to it echoed byte for byte and one more refused with EMSGSIZE, no raw frame on the peer's routable tag"
	"jumbo_unetd|xdp|90|MTU 9000, an emulated endpoint (user nobody, through unetd): it is told max_payload 8992 (messages in pieces both ways), and every size from 1700 to it reaches root's echo and comes back byte for byte"
	"jumbo_one_chunk|xdp|90|MTU 9000, one side without multi-buffer (as on a kernel that lacks it): its max_payload is what a chunk holds (1720), sizes up to that flow both ways, 1721 is refused with EMSGSIZE, a jumbo message toward it is dropped by its socket without hanging the sender"
	"jumbo_mixed_mtu|xdp|90|MTU 9000 on one end, 1500 on the other: each endpoint follows its own link, the smaller side refuses a message over 1492 with EMSGSIZE, messages that fit flow both ways, a big one toward the small side is dropped by the link without hanging the sender"
)

# set_mtu MTU: both ends of the test link.
set_mtu() {
	in_a ip link set "$IF_A" mtu "$1" || fail "cannot set MTU $1 on $IF_A"
	in_b ip link set "$IF_B" mtu "$1" || fail "cannot set MTU $1 on $IF_B"
}

t_jumbo_attach() {
	setup_ns
	set_mtu 9000
	attach a
	attach b
	# The kernel's traffic beside the program, in pieces: a ping of a
	# full jumbo frame each way.
	in_a ping -c 1 -W 5 -M "do" -s 8972 "$IP_B" >/dev/null || fail "8972-byte ping a -> b lost"
	in_b ping -c 1 -W 5 -M "do" -s 8972 "$IP_A" >/dev/null || fail "8972-byte ping b -> a lost"
	local p
	p=$(counter a pass)
	((p > 0)) || fail "program on a saw no frames (pass=$p)"
}

# The size windows sizes_windows checks: a send buffer's edge (1720 with
# 2048-byte chunks), where a frame needs a second and a third piece on
# receive (1790 bytes a piece after the kernel's headroom) or on send,
# and the top.
JUMBO_WINDOWS=(1..16 1480..1492 1700..1810 3540..3620 5340..5400 8960..8992)
# Extra unet-peer options for the echo and the sizes side.
JUMBO_ECHO_OPTS=()
JUMBO_SIZES_OPTS=()

# sizes_windows FROM TO FROMIF TOIF FROMMAC TOMAC WANT [CAP]: echo on TO,
# whose max_payload must be WANT; every window of JUMBO_WINDOWS up to CAP
# (default WANT) sent from FROM and checked byte for byte.
sizes_windows() {
	local s=$1 e=$2 sif=$3 eif=$4 smac=$5 emac=$6 log pid w lo hi max want=$7 cap=${8:-$7}
	log=$T_DIR/echo_$s$e.log
	unet_bg_"$e" "$PEER" echo "$eif" --tag 2 --peer "$smac" --peer-tag 1 \
		--xdp-mode "$T_MODE" --timeout 90 "${JUMBO_ECHO_OPTS[@]}" >"$log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$log" "$pid" >/dev/null
	max=$(sed -n 's/^ready .*max_payload=\([0-9]*\).*/\1/p' "$log")
	[[ $max == "$want" ]] || fail "max_payload on $e is '$max', want $want"
	for w in "${JUMBO_WINDOWS[@]}"; do
		lo=${w%..*} hi=${w#*..}
		((lo <= cap)) || continue
		((hi <= cap)) || hi=$cap
		in_"$s" "$PEER" sizes "$sif" --tag 1 --peer "$emac" --peer-tag 2 \
			--min-size "$lo" --max-size "$hi" "${JUMBO_SIZES_OPTS[@]}" \
			--xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/sizes.log" 2>&1 ||
			{ cat "$T_DIR/sizes.log"; fail "sizes $lo..$hi $s -> $e failed"; }
		grep -qx "sizes ok $lo..$hi" "$T_DIR/sizes.log" ||
			{ cat "$T_DIR/sizes.log"; fail "sizes $s -> $e: no 'sizes ok $lo..$hi'"; }
	done
	stop "$pid" "$log" "echo on $e"
}

t_jumbo_sizes() {
	setup_ns
	set_mtu 9000
	attach a
	attach b
	sizes_windows a b "$IF_A" "$IF_B" "$MAC_A" "$MAC_B" 8992
	sizes_windows b a "$IF_B" "$IF_A" "$MAC_B" "$MAC_A" 8992
	expect_stat a drop_malformed 0
	expect_stat b drop_malformed 0
}

t_jumbo_mixed_mtu() {
	setup_ns
	in_a ip link set "$IF_A" mtu 9000 || fail "cannot set MTU 9000 on $IF_A"
	attach a
	attach b
	# The small side's messages both ways (its sizes end with 1493 refused:
	# EMSGSIZE); the big side sends only what the small one takes.
	sizes_windows b a "$IF_B" "$IF_A" "$MAC_B" "$MAC_A" 8992 1492
	sizes_windows a b "$IF_A" "$IF_B" "$MAC_A" "$MAC_B" 1492
	# Too big for the small side's link: the veth drops each frame, the
	# sender's sends complete and it finishes.
	local before after
	before=$(counter b rx)
	in_a timeout 30 "$PEER" send "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --size 5000 \
		--count 20 --xdp-mode "$T_MODE" --timeout 10 >"$T_DIR/send.log" 2>&1 ||
		{ cat "$T_DIR/send.log"; fail "send of 5000-byte messages toward MTU 1500 did not finish"; }
	grep -q "^send sent=20 " "$T_DIR/send.log" || { cat "$T_DIR/send.log"; fail "not all 20 sends queued"; }
	after=$(counter b rx)
	((after == before)) || fail "b's program saw $((after - before)) frames over its MTU"
}

t_jumbo_one_chunk() {
	setup_ns
	set_mtu 9000
	attach a
	attach b
	# b without multi-buffer: echo there, sizes from a up to b's 1720.
	JUMBO_ECHO_OPTS=(--no-multi-buffer)
	sizes_windows a b "$IF_A" "$IF_B" "$MAC_A" "$MAC_B" 1720
	JUMBO_ECHO_OPTS=()
	# and b's sizes (ending with 1721 refused: EMSGSIZE) against a's echo.
	JUMBO_SIZES_OPTS=(--no-multi-buffer)
	sizes_windows b a "$IF_B" "$IF_A" "$MAC_B" "$MAC_A" 8992 1720
	JUMBO_SIZES_OPTS=()
	# A 5000-byte message toward a socket bound without multi-buffer:
	# its kernel drops it; the sender finishes.
	in_a timeout 30 "$PEER" send "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --size 5000 \
		--count 20 --xdp-mode "$T_MODE" --timeout 10 >"$T_DIR/send.log" 2>&1 ||
		{ cat "$T_DIR/send.log"; fail "send of 5000-byte messages did not finish"; }
	grep -q "^send sent=20 " "$T_DIR/send.log" || { cat "$T_DIR/send.log"; fail "not all 20 sends queued"; }
}

t_jumbo_routable() {
	local log pid max
	setup_ns
	set_mtu 9000
	attach a
	attach b
	chan_neigh
	log=$T_DIR/echo.log
	unet_bg_b "$PEER" echo "$IF_B" --tag 2 --peer-ip "$IP_A" --peer-tag 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$log" "$pid" >/dev/null
	max=$(sed -n 's/^ready .*max_payload=\([0-9]*\).*/\1/p' "$log")
	note "routable channel at MTU 9000: max_payload $max"
	[[ $max =~ ^[0-9]+$ ]] && ((max <= 1720)) ||
		fail "a routable channel offers $max bytes, more than one send buffer holds (1720)"
	in_a timeout 30 "$PEER" sizes "$IF_A" --tag 1 --peer-ip "$IP_B" --peer-tag 2 \
		--min-size 1700 --xdp-mode "$T_MODE" --timeout 10 >"$T_DIR/sizes.log" 2>&1 ||
		{ tail -5 "$T_DIR/sizes.log"; fail "sizes over the routable channel failed"; }
	tail -3 "$T_DIR/sizes.log"
	stop "$pid" "$log" "echo on b"
	expect_stat b drop_chan_kind 0
}

t_jumbo_unetd() {
	local log pid
	setup_ns
	set_mtu 9000
	attach a
	attach b
	start_unetd "user 65534 kinds emulated tags 1-100"
	log=$T_DIR/echo.log
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$log" "$pid" >/dev/null
	as_nobody timeout 30 "$PEER" sizes "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--min-size 1700 --timeout 5 >"$T_DIR/sizes.log" 2>&1 ||
		{ tail -5 "$T_DIR/sizes.log"; fail "nobody's sizes through unetd failed"; }
	grep -E '^ready|^sizes' "$T_DIR/sizes.log"
	grep -q '^ready .*max_payload=8992 ' "$T_DIR/sizes.log" ||
		fail "the emulated endpoint is not told MTU 9000's max_payload (8992)"
	grep -qx 'sizes ok 1700..8992' "$T_DIR/sizes.log" || fail "not every size reached the echo and back"
	stop "$pid" "$log" "echo on a"
	stop_unetd
}
