# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_tcp6.sh - TCP/IPv6 over U-Net (docs/tcp.md, "IPv6") against the
# kernel's TCP/IPv6.  Sourced by run.sh (see lib.sh for the helpers;
# setup_v6_link is t_udp6.sh's).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"tcp6_link|-|60|U-Net TCP/IPv6 <-> kernel TCP/IPv6 on the link both ways, 200 kB each way byte for byte: a kernel client reaches the U-Net-only address by neighbour solicitation (answered by the TCP layer) and the U-Net listener; a U-Net client reaches a kernel server; MSS 1440; unetctl tcp list shows the IPv6 port"
	"tcp6_bad|-|60|hostile IPv6/TCP frames from a host on the link (wrong checksum, truncated, payload length below a TCP header, data offset 4, hop-by-hop and fragment headers, sources ff02::1, ::1, v4-mapped and our own address -- ::1 and our own address aborted the process in lwIP before they were refused --, a foreign destination) each dropped and counted where it must be, and the listener still serves a connection; a listener on an address the kernel also has: its port held in the kernel against another user, a segment for it behind a hop-by-hop header dropped rather than passed to the kernel, 3000 seeded random segments, then a connection served"
	"tcp6_tiny_mss|-|40|a peer on the link whose SYN to a U-Net IPv6 listener offers MSS 1 gets the 200 bytes it sent echoed in one segment, not a byte a segment: a peer's MSS below what every IPv6 path carries (1220) is raised to it (IPv4's floor is its SYN cookies' 536)"
	"tcp6_two_endpoints|-|40|one process with U-Net IPv6 listeners on the same port on two interfaces (backlog 2 each): a half-open connection on the second, then three SYNs to the first: the second's half-open connection is not reset (no RST on its link, its rx_syn_dropped 0) and the first drops its own oldest once -- the first's backlog counted the second's before"
	"tcp6_routed|-|60|U-Net TCP/IPv6 <-> kernel TCP/IPv6 across a router both ways, next hops from the kernel's IPv6 routes; at route MTU 1280 both sides' MSS is 1220 and 200 kB still move byte for byte"
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

# Hostile frames from a host on the link to a U-Net listening port: each
# dropped where it must be and counted (the XDP program for lengths and
# extension headers, the layer for checksums and sources), the segment
# to a foreign address left to the kernel; then a real connection still
# works.
t_tcp6_bad() {
	local pid k n=3
	T_MODE=native
	setup_ns
	setup_v6_link
	attach a
	ip -n "$NS_B" -6 neigh replace "$UUDP6_ADDR_A" lladdr "$MAC_A" dev "$IF_B" nud permanent ||
		fail "static neighbour on b"
	unet_bg_a "$BUILD/tools/unet-tcp6" server "$IF_A" --local "[$UUDP6_ADDR_A]:7000" \
		--bytes 1000 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/userver.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/userver.log" "$pid" >/dev/null
	local sends=()
	for k in bad-csum truncated short doff-low hop-by-hop fragment src-group src-loopback \
		src-mapped src-self good; do
		sends+=(--send "$k,$n,[$UUDP6_ADDR_A]:7000")
	done
	sends+=(--send "good,$n,[fd00:201::99]:7000")
	in_b python3 "$ROOT/tests/tools/tcp6-hostile.py" "$IF_B" --dst-mac "$MAC_A" \
		--local "[$UUDP6_ADDR_B]:40000" "${sends[@]}" || fail "injecting"
	# delivered: the bad checksum, the four sources, the good ACK
	expect_stat a tcp_delivered $((6 * n))
	expect_stat a drop_tcp_malformed $((3 * n))
	expect_stat a drop_ip6_exthdr $((2 * n))
	in_b python3 "$ROOT/tests/tools/tcp6-kern.py" client "[$UUDP6_ADDR_A]:7000" \
		--bytes 1000 >"$T_DIR/kclient.log" 2>&1 || { cat "$T_DIR/kclient.log"; fail "kernel client after the hostile frames"; }
	wait "$pid" || { cat "$T_DIR/userver.log"; fail "U-Net server failed"; }
	cat "$T_DIR/userver.log"
	grep -q " rx_bad_csum=$n " "$T_DIR/userver.log" || fail "wrong checksums not counted"
	grep -q " rx_malformed=$((4 * n)) " "$T_DIR/userver.log" || fail "odd sources not counted as malformed"
	grep -q " rx_no_conn=$n " "$T_DIR/userver.log" || fail "the good ACKs to no connection not counted"

	# A U-Net port on an address the kernel has too: held in the kernel
	# (another user's bind fails), and a segment for it behind a
	# hop-by-hop header never reaches the kernel (which would reset the
	# peer): dropped.
	ip -n "$NS_A" addr add fd00:201::3/64 dev "$IF_A" nodad || fail "a's kernel address"
	unet_bg_a "$BUILD/tools/unet-tcp6" server "$IF_A" --local "[fd00:201::3]:7002" \
		--bytes 1000 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/userver2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/userver2.log" "$pid" >/dev/null
	in_a setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import errno, socket
for a in ("fd00:201::3", "::"):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    try:
        s.bind((a, 7002))
        print("bound", a)
    except OSError as e:
        print("refused", a, errno.errorcode.get(e.errno))
' >"$T_DIR/bind.out" 2>&1
	cat "$T_DIR/bind.out"
	[[ $(grep -c "^refused .* EADDRINUSE$" "$T_DIR/bind.out") == 2 ]] ||
		fail "another user bound the port of a U-Net listener on the kernel's address"
	in_b python3 "$ROOT/tests/tools/tcp6-hostile.py" "$IF_B" --dst-mac "$MAC_A" \
		--local "[$UUDP6_ADDR_B]:40000" --send "hop-by-hop,$n,[fd00:201::3]:7002" || fail "injecting"
	expect_stat a drop_ip6_exthdr $((3 * n))
	# then a seeded storm of random segments (sources ::1 and our own
	# address among them), under ASan in the sanitizer pass: the
	# listener must still serve a connection after it
	in_b python3 "$ROOT/tests/tools/tcp6-hostile.py" "$IF_B" --dst-mac "$MAC_A" \
		--local "[$UUDP6_ADDR_B]:40000" --fuzz "0x7cb6,3000,[fd00:201::3]:7002" || fail "fuzzing"
	in_b python3 "$ROOT/tests/tools/tcp6-kern.py" client "[fd00:201::3]:7002" \
		--bytes 1000 >"$T_DIR/kclient2.log" 2>&1 || { cat "$T_DIR/kclient2.log"; fail "kernel client to the kernel's address"; }
	wait "$pid" || { cat "$T_DIR/userver2.log"; fail "U-Net server on the kernel's address failed"; }
}

# t_udp6.sh's routed fixture: U-Net on a, the kernel on c behind the
# router b.  Then the route from a to c and the router's link to c at
# MTU 1280: both sides' MSS is 1220 and the data still moves.
t_tcp6_routed() {
	local pid
	T_MODE=native
	setup_v6_routed
	unet_bg_a "$BUILD/tools/unet-tcp6" server "$IF_A" --local "[$UUDP6_ADDR_A]:7000" \
		--bytes $TCP6_BYTES --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/userver.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/userver.log" "$pid" >/dev/null
	in_c python3 "$ROOT/tests/tools/tcp6-kern.py" client "[$UUDP6_ADDR_A]:7000" \
		--bytes $TCP6_BYTES >"$T_DIR/kclient.log" 2>&1
	cat "$T_DIR/kclient.log"
	grep -qx "ok $TCP6_BYTES mss=1440" "$T_DIR/kclient.log" ||
		fail "kernel client (c) -> U-Net server (a) across the router failed"
	wait "$pid" || { cat "$T_DIR/userver.log"; fail "U-Net server failed"; }
	grep -q "^ok $TCP6_BYTES mss=1440 peer=fd00:202::2\$" "$T_DIR/userver.log" ||
		{ cat "$T_DIR/userver.log"; fail "U-Net server: not the routed peer at MSS 1440"; }

	{ ip -n "$NS_A" -6 route replace default via "$UUDP6_ADDR_B" dev "$IF_A" mtu 1280 &&
		ip -n "$NS_B" link set "$IF_RC" mtu 1280; } || fail "MTU 1280 on the route"
	ip netns exec "$NS_C" python3 "$ROOT/tests/tools/tcp6-kern.py" server "[fd00:202::2]:7100" \
		--bytes $TCP6_BYTES >"$T_DIR/kserver.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/kserver.log" "$pid" >/dev/null
	in_a "$BUILD/tools/unet-tcp6" client "$IF_A" --local "[$UUDP6_ADDR_A]" \
		--remote "[fd00:202::2]:7100" --bytes $TCP6_BYTES --xdp-mode "$T_MODE" \
		>"$T_DIR/uclient.log" 2>&1 || { cat "$T_DIR/uclient.log"; fail "U-Net client failed"; }
	cat "$T_DIR/uclient.log"
	grep -q "^ok $TCP6_BYTES mss=1220 peer=fd00:202::2\$" "$T_DIR/uclient.log" ||
		fail "U-Net client at route MTU 1280: MSS not 1220"
	wait "$pid" || fail "kernel server failed"
	cat "$T_DIR/kserver.log"
	grep -qx "ok $TCP6_BYTES mss=1220" "$T_DIR/kserver.log" ||
		fail "kernel server: our SYN did not advertise the route's MSS 1220"
}

t_tcp6_tiny_mss() {
	local pid out
	T_MODE=native
	setup_ns
	setup_v6_link
	attach a
	# The peer's address is one b's kernel does not have (it would reset
	# the SYN-ACK); a reaches it at b's MAC.
	ip -n "$NS_A" -6 neigh replace fd00:201::99 lladdr "$MAC_B" dev "$IF_A" nud permanent ||
		fail "neighbour entry"
	unet_bg_a "$BUILD/tools/unet-tcp6" server "$IF_A" --local "[$UUDP6_ADDR_A]:7000" \
		--bytes 200 --xdp-mode "$T_MODE" --timeout 15 >"$T_DIR/userver.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/userver.log" "$pid" >/dev/null
	out=$(in_b /usr/bin/python3 -W ignore "$ROOT/tests/tools/tcp6-tiny-mss.py" "$IF_B" "$MAC_A" \
		fd00:201::99 "$UUDP6_ADDR_A" 7000 1) || fail "the tiny-MSS peer: $out"
	note "$out"
	[[ $out =~ sizes\ ([0-9,]+)$ ]] || fail "the server sent no data to the tiny-MSS peer: $out"
	[[ ${BASH_REMATCH[1]} == 200 ]] || fail "the server's segments to a peer offering MSS 1: sizes ${BASH_REMATCH[1]} (want one of 200)"
	kill "$pid" 2>/dev/null
}

t_tcp6_two_endpoints() {
	local a2 b2 mac_a2 pid out
	T_MODE=native
	setup_ns
	setup_v6_link
	a2="${IF_A}x" b2="${IF_B}x"
	ip -n "$NS_A" link add "$a2" type veth peer name "$b2" netns "$NS_B" || fail "second veth pair"
	v6_enable "$NS_A" "$a2"
	v6_enable "$NS_B" "$b2"
	ip -n "$NS_A" link set "$a2" up
	ip -n "$NS_B" link set "$b2" up
	ip -n "$NS_A" -6 route add fd00:202::/64 dev "$a2"
	mac_a2=$(in_a cat "/sys/class/net/$a2/address")
	# The peers' addresses are none of b's kernel's (it would reset
	# the SYN-ACKs); a reaches them at b's MACs.
	ip -n "$NS_A" -6 neigh replace fd00:201::99 lladdr "$MAC_B" dev "$IF_A" nud permanent
	ip -n "$NS_A" -6 neigh replace fd00:202::99 lladdr "$(in_b cat "/sys/class/net/$b2/address")" \
		dev "$a2" nud permanent
	attach a
	ctl_a attach "$a2" --mode native >/dev/null || fail "attach $a2"
	unet_bg_a "$BUILD/tools/unet-tcp6-pair" "$IF_A" "$UUDP6_ADDR_A" "$a2" fd00:202::1 7000 2 8 \
		>"$T_DIR/pair.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/pair.log" "$pid" >/dev/null
	out=$(in_b /usr/bin/python3 -W ignore - "$IF_B" "$MAC_A" "$UUDP6_ADDR_A" "$b2" "$mac_a2" <<'PY'
import sys, time
from scapy.all import AsyncSniffer, Ether, IPv6, TCP, conf, sendp
conf.verb = 0
if1, mac1, addr1, if2, mac2 = sys.argv[1:]
sn = AsyncSniffer(iface=if2, lfilter=lambda q: TCP in q and q[TCP].dport == 5000)
sn.start(); time.sleep(0.3)
sendp(Ether(dst=mac2) / IPv6(src="fd00:202::99", dst="fd00:202::1") /
      TCP(sport=5000, dport=7000, flags="S", seq=1), iface=if2)
time.sleep(0.5)
for sp in (6001, 6002, 6003):
    sendp(Ether(dst=mac1) / IPv6(src="fd00:201::99", dst=addr1) /
          TCP(sport=sp, dport=7000, flags="S", seq=1), iface=if1)
    time.sleep(0.2)
time.sleep(1)
print("link2 " + " ".join(q[TCP].sprintf("%TCP.flags%") for q in sn.stop()))
PY
	) || fail "scapy: $out"
	note "$out"
	kill -TERM "$pid" 2>/dev/null
	unet_bg_wait "$pid" 10 || { cat "$T_DIR/pair.log"; fail "unet-tcp6-pair failed"; }
	cat "$T_DIR/pair.log"
	[[ $out == "link2 SA"* && $out != *R* ]] ||
		fail "the second endpoint's half-open client saw '$out' (want its SYN-ACK and no reset)"
	grep -qx "endpoint 2 rx_syn_dropped=0" "$T_DIR/pair.log" || fail "the second endpoint dropped a half-open connection"
	grep -qx "endpoint 1 rx_syn_dropped=1" "$T_DIR/pair.log" || fail "the first endpoint's backlog did not take its own oldest"
}
