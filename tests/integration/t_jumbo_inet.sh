# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_jumbo_inet.sh - UDP and TCP over U-Net at MTU 9000, against the
# kernel's own sockets: datagrams and segments larger than one chunk, in
# pieces both ways.  Sourced by run.sh (see lib.sh for the helpers;
# set_mtu is t_jumbo.sh's).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_jumbo_slots|-|60|MTU 9000, a program under unet-run with two UDP sockets it never reads and an echo: 100 datagrams of 8000 bytes to each unread socket (more than the endpoint's 64 reassembly slots) leave the echo answering every 8000-byte datagram (a waiting large datagram holds a copy, not a slot; the copies one socket holds are bounded)"
	"unet_run_udp_unread|-|60|MTU 1500, the same with 1100 datagrams of 100 bytes to each unread socket (together more than the endpoint's receive frames): the echo answers all 10 (a socket keeps 32 datagrams in frames, an endpoint's sockets 256, the rest in bounded copies)"
	"jumbo_udp|xdp|90|MTU 9000: U-Net UDP max_payload 8972; kernel UDP -> U-Net echo and U-Net UDP -> kernel echo, sizes around one, two and five chunks and up to 8972, byte for byte; 8973 refused with EMSGSIZE; a zero-copy send takes one buffer (1712), 1713 refused"
	"jumbo_tcp|xdp|90|MTU 9000: 8 MiB kernel TCP -> U-Net sink and U-Net -> kernel TCP sink, every byte checked against the pattern; both directions use 8960-byte segments (the kernel's snd_mss and rcv_mss say so)"
)

# Sizes around where a frame needs a second piece (1792 bytes a piece on
# receive after the kernel's headroom, 1790 on send: UDP payloads 1748
# and 1750), a third (3538, 3542), six (8908, 8918), and the top.
JUMBO_UDP_WINDOWS=(1..4 1740..1760 3530..3550 8900..8972)

t_jumbo_udp() {
	setup_ns
	set_mtu 9000
	attach a
	local pid w lo hi n=0
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --copy --xdp-mode "$T_MODE" \
		--timeout 80 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	grep -q "max_payload=8972" "$T_DIR/uecho.log" ||
		fail "U-Net UDP max_payload is not 8972: $(grep ready "$T_DIR/uecho.log")"
	note "kernel UDP client (b) -> U-Net echo (a): ${JUMBO_UDP_WINDOWS[*]}"
	for w in "${JUMBO_UDP_WINDOWS[@]}"; do
		lo=${w%..*} hi=${w#*..}
		in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --min "$lo" --max "$hi" \
			--timeout 30 >"$T_DIR/ksizes.log" 2>&1
		grep -qx "sizes ok $lo..$hi" "$T_DIR/ksizes.log" ||
			{ cat "$T_DIR/ksizes.log"; fail "kernel client -> U-Net echo failed in $w"; }
		n=$((n + hi - lo + 1))
	done
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	grep -qx "echo echoed=$n" "$T_DIR/uecho.log" || fail "U-Net echo did not echo exactly $n"

	note "U-Net UDP client (a) -> kernel echo (b): the same sizes, then 8973"
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 80 >"$T_DIR/kecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	for w in "${JUMBO_UDP_WINDOWS[@]}" 8973..8973; do
		lo=${w%..*} hi=${w#*..}
		in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7101" --remote "$IP_B:7100" --min "$lo" \
			--max "$hi" --copy --xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/usizes.log" 2>&1
		if ((lo == 8973)); then
			grep -qx "sizes refused 8973: Message too long" "$T_DIR/usizes.log" ||
				{ cat "$T_DIR/usizes.log"; fail "8973 bytes were not refused with EMSGSIZE"; }
		else
			grep -qx "sizes ok $lo..$hi" "$T_DIR/usizes.log" ||
				{ cat "$T_DIR/usizes.log"; fail "U-Net client -> kernel echo failed in $w"; }
		fi
	done
	# In place (unet_udp__send): one send buffer, 1712 bytes of payload
	# with 2048-byte frames; a larger datagram is send_copy's.
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7101" --remote "$IP_B:7100" --min 1708 \
		--max 1713 --xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/usizes_inplace.log" 2>&1
	grep -qx "sizes refused 1713: Message too long" "$T_DIR/usizes_inplace.log" ||
		{ cat "$T_DIR/usizes_inplace.log"; fail "in place: 1708..1712 not sent, or 1713 not refused"; }
	stop "$pid" "$T_DIR/kecho.log" "kernel echo"
	grep -qx "echo echoed=$((n + 5))" "$T_DIR/kecho.log" ||
		fail "kernel echo did not echo exactly $((n + 5)): $(cat "$T_DIR/kecho.log")"
}

t_jumbo_tcp() {
	local UTCP=$BUILD/tools/unet-tcp TPEER=$ROOT/tests/tools/tcp-peer.py pid n=$((8 << 20))
	[[ -x $UTCP ]] || fail "$UTCP not built"
	setup_ns
	set_mtu 9000
	attach a
	# skb mode: the kernel's GSO super-segments come in more pieces than
	# a frame may have, and are refused (rx_bad_pieces): the connection
	# stalls (docs/tcp.md, "Jumbo MTUs").
	[[ $T_MODE == skb ]] && { in_b ethtool -K "$IF_B" tso off gso off >/dev/null 2>&1 ||
		fail "ethtool -K $IF_B tso off gso off"; }

	note "kernel source (b) -> U-Net sink (a), $n bytes"
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		sink --port 5000 --conns 1 >"$T_DIR/usink.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/usink.log" "$pid" >/dev/null
	in_b timeout 60 python3 "$TPEER" source "$IP_A:5000" --bytes "$n" >"$T_DIR/ksrc.log" 2>&1 ||
		{ cat "$T_DIR/ksrc.log"; fail "kernel source -> U-Net sink failed"; }
	finish "$pid" "$T_DIR/usink.log" 10 "U-Net sink"
	grep -q "^sink conns=1 bytes=$n errors=0" "$T_DIR/usink.log" ||
		fail "the U-Net sink did not get the $n bytes: $(grep '^sink' "$T_DIR/usink.log")"
	grep -q "^epstats .* rx_bad_pieces=0 " "$T_DIR/usink.log" ||
		fail "frames in pieces refused: $(grep '^epstats' "$T_DIR/usink.log")"
	note "$(sed -n 's/ tcp_info: .*//p' "$T_DIR/ksrc.log")"
	grep -q "^source ok bytes=$n .* snd_mss=8960 " "$T_DIR/ksrc.log" ||
		fail "the kernel did not send 8960-byte segments (U-Net's MSS option)"

	note "U-Net source (a) -> kernel sink (b), $n bytes"
	unet_bg_b python3 "$TPEER" sink "$IP_B:6000" --conns 1 >"$T_DIR/ksink.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/ksink.log" "$pid" >/dev/null
	in_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		source --remote "$IP_B:6000" --bytes "$n" >"$T_DIR/usrc.log" 2>&1 ||
		{ cat "$T_DIR/usrc.log"; fail "U-Net source -> kernel sink failed"; }
	cat "$T_DIR/usrc.log"
	finish "$pid" "$T_DIR/ksink.log" 10 "kernel sink"
	grep -qx "sink conns=1 bytes=$n bad=0 rcv_mss=8960" "$T_DIR/ksink.log" ||
		fail "kernel sink: $(grep '^sink' "$T_DIR/ksink.log"), want $n bytes, none bad, 8960-byte segments"
}

# unread_starve MTU SIZE N: a program under unet-run with two UDP sockets
# it never reads and an echo; a kernel peer sends N datagrams of SIZE
# bytes to each unread socket, then 10 of SIZE to the echo: every one must
# come back (what the unread sockets hold is bounded, and not the frames
# or slots the echo needs).
unread_starve() {
	local pid run_env=() mtu=$1 size=$2 n=$3
	T_MODE=${T_MODE:-skb}
	setup_ns
	((mtu != 1500)) && set_mtu "$mtu"
	attach a
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env) UNET_PIN_ROOT="$UNET_PIN_ROOT")
	unet_bg_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/run.log" \
		/usr/bin/python3 -c '
import select, socket, sys
idle = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for i, u in enumerate(idle):
    u.bind((sys.argv[1], 7000 + i))
echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); echo.bind((sys.argv[1], 7002))
print("ready endpoint=0", flush=True)
while True:
    r, _, _ = select.select([echo], [], [], 20)
    if not r:
        break
    d, a = echo.recvfrom(65536)
    if d == b"end":
        break
    echo.sendto(d, a)
' "$IP_A" >"$T_DIR/server.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/server.out" "$pid" >/dev/null
	in_b /usr/bin/python3 -c '
import socket, sys, time
a, size, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(n):
    for port in (7000, 7001):
        s.sendto(bytes([i % 251]) * size, (a, port))
    if i % 50 == 49:
        time.sleep(0.005)
ok = 0
for i in range(10):
    d = bytes((i * 7 + j) % 251 for j in range(size))
    s.sendto(d, (a, 7002))
    try:
        ok += s.recv(65536) == d
    except socket.timeout:
        pass
s.sendto(b"end", (a, 7002))
print("echoed", ok, "of 10")
' "$IP_A" "$size" "$n" >"$T_DIR/client.out" 2>&1 || { cat "$T_DIR/client.out"; fail "the client failed"; }
	finish "$pid" "$T_DIR/server.out" 15 "the server under unet-run"
	cat "$T_DIR/client.out" "$T_DIR/run.log"
	grep -q "udp bind $IP_A:7000: U-Net" "$T_DIR/run.log" || fail "the unread sockets were not on U-Net"
	grep -qx "echoed 10 of 10" "$T_DIR/client.out" ||
		fail "unread sockets' datagrams starved the process's other socket"
}

t_unet_run_jumbo_slots() {
	unread_starve 9000 8000 100
}

t_unet_run_udp_unread() {
	unread_starve 1500 100 1100
}
