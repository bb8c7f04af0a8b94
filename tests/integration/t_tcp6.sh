# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_tcp6.sh - TCP/IPv6 over U-Net (docs/tcp.md, "IPv6") against the
# kernel's TCP/IPv6.  Sourced by run.sh (see lib.sh for the helpers;
# setup_v6_link is t_udp6.sh's).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"tcp6_link|-|60|U-Net TCP/IPv6 <-> kernel TCP/IPv6 on the link both ways, 200 kB each way byte for byte: a kernel client reaches the U-Net-only address by neighbour solicitation (answered by the TCP layer) and the U-Net listener; a U-Net client reaches a kernel server; MSS 1440; unetctl tcp list shows the IPv6 port"
)

TCP6_BYTES=200000

t_tcp6_link() {
	local pid
	T_MODE=native
	setup_ns
	setup_v6_link
	attach a
	# kernel client on b -> U-Net server on a (an address only U-Net has)
	unet_bg_a "$BUILD/tools/unet-tcp6" server "$IF_A" --local "[$UUDP6_ADDR_A]:7000" \
		--bytes $TCP6_BYTES --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/userver.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/userver.log" "$pid" >/dev/null
	ctl_a tcp list "$IF_A" | grep -q "$UUDP6_ADDR_A" ||
		{ ctl_a tcp list "$IF_A"; fail "unetctl tcp list lacks [$UUDP6_ADDR_A]:7000"; }
	in_b python3 "$ROOT/tests/tools/tcp6-kern.py" client "[$UUDP6_ADDR_A]:7000" \
		--bytes $TCP6_BYTES >"$T_DIR/kclient.log" 2>&1
	cat "$T_DIR/kclient.log"
	grep -qx "ok $TCP6_BYTES mss=1440" "$T_DIR/kclient.log" || fail "kernel client -> U-Net server failed"
	wait "$pid" || { cat "$T_DIR/userver.log"; fail "U-Net server failed"; }
	cat "$T_DIR/userver.log"
	grep -q "^ok $TCP6_BYTES mss=1440 peer=$UUDP6_ADDR_B\$" "$T_DIR/userver.log" ||
		fail "U-Net server did not report the kernel peer at MSS 1440"
	ip -n "$NS_B" -6 neigh show "$UUDP6_ADDR_A" dev "$IF_B" | grep -qi "$MAC_A" ||
		fail "b's kernel did not learn $UUDP6_ADDR_A at $MAC_A"

	# U-Net client on a -> kernel server on b
	ip netns exec "$NS_B" python3 "$ROOT/tests/tools/tcp6-kern.py" server "[$UUDP6_ADDR_B]:7100" \
		--bytes $TCP6_BYTES >"$T_DIR/kserver.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/kserver.log" "$pid" >/dev/null
	in_a "$BUILD/tools/unet-tcp6" client "$IF_A" --local "[$UUDP6_ADDR_A]" \
		--remote "[$UUDP6_ADDR_B]:7100" --bytes $TCP6_BYTES --xdp-mode "$T_MODE" \
		>"$T_DIR/uclient.log" 2>&1 || { cat "$T_DIR/uclient.log"; fail "U-Net client failed"; }
	cat "$T_DIR/uclient.log"
	grep -q "^ok $TCP6_BYTES mss=1440 peer=$UUDP6_ADDR_B\$" "$T_DIR/uclient.log" ||
		fail "U-Net client -> kernel server failed"
	wait "$pid" || fail "kernel server failed"
	grep -qx "ok $TCP6_BYTES mss=1440" "$T_DIR/kserver.log" || fail "kernel server saw MSS other than 1440"
	expect_stat a drop_tcp_malformed 0
}
