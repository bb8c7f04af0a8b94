# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_routed.sh - UDP and TCP over U-Net to a peer on another subnet, through
# a router: next hops from the kernel's routing and neighbour tables
# (docs/udp.md and docs/tcp.md, "Routing").  Sourced by run.sh (lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"routed_udp|xdp|90|U-Net UDP <-> kernel UDP across a router, 1..1472 bytes both ways byte for byte; the default route moved to a second gateway mid-run and the echoes follow; a route mtu 1200: 1172 bytes go, 1173 get EMSGSIZE; a silent gateway gives EAGAIN then EHOSTUNREACH, logged; a peer routed by another interface gets ENETUNREACH"
	"routed_tcp|xdp|120|iperf3 (1 s) across a router, a U-Net client under unet-run both ways; a 1200-byte link behind the router, a route mtu 1200 on the U-Net side and a peer advertising MSS 1460: data still moves both ways"
)

# The fixture (after setup_ns):
#
#   a: $IF_A 10.201.0.1/24 (U-Net) --- b (router): $IF_B 10.201.0.2/24,
#      default via 10.201.0.2         $GW2 10.201.0.3/24 (a macvlan on $IF_B:
#                                      a second gateway with its own MAC),
#                                      $IF_RC 10.202.0.1/24 --- c: $IF_C 10.202.0.2/24,
#                                                                  default via 10.202.0.1
#
# b forwards.  arp_ignore=1 there, so each gateway address is answered
# only with its own interface's MAC.
IP_C=10.202.0.2
GW1=10.201.0.2
GW2_IP=10.201.0.3

setup_routed() {
	setup_ns
	GW2="${NS_A%a}g2"
	unet_netns_router || fail "the routed fixture (scripts/netns.sh unet_netns_router)"
	ip -n "$NS_B" link add "$GW2" link "$IF_B" type macvlan mode bridge || fail "macvlan $GW2"
	in_b sysctl -qw net.ipv4.conf.all.arp_ignore=1 >/dev/null || fail "arp_ignore on the router"
	{ ip -n "$NS_B" addr add "$GW2_IP/24" dev "$GW2" &&
		ip -n "$NS_B" link set "$GW2" up; } || fail "the second gateway $GW2_IP"
	note "routed: $NS_A ($IP_A) -> $NS_B (router $GW1, $GW2_IP) -> $NS_C ($IP_C)"
	attach a
}

# rx_packets NS DEV: the interface's received packets.
rx_packets() {
	ip -n "$1" -s -j link show dev "$2" | jq -r '.[0].stats64.rx.packets'
}

t_routed_udp() {
	local pid max=1472
	setup_routed
	# kernel client on c -> U-Net echo on a (replies go through the gateway)
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	in_c "$KUDP" sizes --local "$IP_C:7001" --remote "$IP_A:7000" --max $max --timeout 30 \
		>"$T_DIR/ksizes.log" 2>&1
	cat "$T_DIR/ksizes.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/ksizes.log" || fail "kernel client (c) -> U-Net echo (a) across the router failed"

	# The default route moves to the second gateway while the same echo
	# runs; then the first one stops forwarding.  The echoes follow (the
	# kernel client retries nothing: every datagram must come back).
	local g2_before g2_after
	g2_before=$(rx_packets "$NS_B" "$GW2")
	ip -n "$NS_A" route replace default via "$GW2_IP" || fail "moving the default route"
	in_b sysctl -qw "net.ipv4.conf.$IF_B.forwarding=0" >/dev/null || fail "forwarding off on $IF_B"
	local i ok=0
	# bounded: the library asks the kernel again within 1 s
	for ((i = 0; i < 20; i++)); do
		if in_c "$KUDP" sizes --local "$IP_C:7002" --remote "$IP_A:7000" --max 50 --timeout 1 \
			>"$T_DIR/ksizes2.log" 2>&1; then
			ok=1
			break
		fi
	done
	((ok)) || { cat "$T_DIR/ksizes2.log"; fail "after the route change the echoes did not come back through $GW2_IP"; }
	in_c "$KUDP" sizes --local "$IP_C:7003" --remote "$IP_A:7000" --max $max --timeout 30 \
		>"$T_DIR/ksizes3.log" 2>&1
	grep -qx "sizes ok 1..$max" "$T_DIR/ksizes3.log" || { cat "$T_DIR/ksizes3.log"; fail "sizes through the second gateway failed"; }
	g2_after=$(rx_packets "$NS_B" "$GW2")
	note "second gateway received $((g2_after - g2_before)) frames"
	((g2_after - g2_before >= max)) || fail "the echoes did not go through the second gateway"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"

	# U-Net client on a -> kernel echo on c, through the second gateway
	unet_bg_c_echo() {
		ip netns exec "$NS_C" "$KUDP" echo --local "$IP_C:7100" --timeout 60 >"$T_DIR/kecho.log" 2>&1 &
		UNET_BG_PID=$!
		_UNET_BG_PIDS+=("$UNET_BG_PID")
	}
	unet_bg_c_echo
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7101" --remote "$IP_C:7100" --max $max \
		--xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/usizes.log" 2>&1
	cat "$T_DIR/usizes.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/usizes.log" || fail "U-Net client (a) -> kernel echo (c) across the router failed"

	# A route MTU of 1200: 1172 bytes of payload fit, 1173 do not.
	ip -n "$NS_A" route replace default via "$GW2_IP" mtu 1200 || fail "route mtu"
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7102" --remote "$IP_C:7100" --max 1172 \
		--xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/usizes_mtu.log" 2>&1
	grep -qx "sizes ok 1..1172" "$T_DIR/usizes_mtu.log" || { cat "$T_DIR/usizes_mtu.log"; fail "sizes up to the route MTU failed"; }
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7103" --remote "$IP_C:7100" --max 1173 \
		--xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/usizes_big.log" 2>&1 &&
		fail "a datagram past the route MTU was sent"
	cat "$T_DIR/usizes_big.log"
	grep -q "send 1173: Message too long" "$T_DIR/usizes_big.log" || fail "1173 bytes past a route MTU of 1200: not EMSGSIZE"
	stop "$pid" "$T_DIR/kecho.log" "kernel echo"

	# A gateway that never answers ARP: -EAGAIN while the kernel asks,
	# then -EHOSTUNREACH, with the reason logged.  The kernel asks 3
	# times, 100 ms apart here.
	in_a sysctl -qw "net.ipv4.neigh.$IF_A.retrans_time_ms=100" >/dev/null || fail "retrans_time_ms"
	ip -n "$NS_A" route add 10.204.0.0/24 via 10.201.0.77 || fail "a route through a silent gateway"
	in_a "$UUDP" unreach "$IF_A" --local "$IP_A:7105" --remote 10.204.0.9:7100 --count 20 \
		--gap-ms 100 --xdp-mode "$T_MODE" --timeout 10 >"$T_DIR/unreach.log" 2>&1
	cat "$T_DIR/unreach.log"
	local line
	line=$(grep '^unreach ' "$T_DIR/unreach.log") || fail "no unreach summary"
	[[ $line =~ \ ok=0\  ]] || fail "a datagram went out through a gateway that never answered"
	[[ $line =~ ehostunreach=([0-9]+) ]] && ((BASH_REMATCH[1] > 0)) ||
		fail "a silent gateway never gave EHOSTUNREACH"
	grep -q "gateway 10.201.0.77 did not answer ARP" "$T_DIR/unreach.log" || fail "the reason was not logged"

	# A peer routed by another interface of a's: not this endpoint's.
	local dummy="${NS_A%a}d0"
	{ ip -n "$NS_A" link add "$dummy" type veth peer name "${dummy%0}1" &&
		ip -n "$NS_A" addr add 10.203.0.1/24 dev "$dummy" &&
		ip -n "$NS_A" link set "$dummy" up; } || fail "a second interface on a"
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7104" --remote 10.203.0.9:7100 --max 1 \
		--xdp-mode "$T_MODE" --timeout 10 >"$T_DIR/usizes_other.log" 2>&1 &&
		fail "a datagram went to a peer routed by another interface"
	cat "$T_DIR/usizes_other.log"
	grep -q "send 1: Network is unreachable" "$T_DIR/usizes_other.log" ||
		fail "a peer routed by another interface: not ENETUNREACH"
}

# router_frags: datagrams the router had to fragment (its FragOKs).
router_frags() {
	ip netns exec "$NS_B" awk '/^Ip: [0-9]/ { print $18 }' /proc/net/snmp
}

# iperf3 client under unet-run on a against iperf3 -s on c, -t 1, both
# directions; tag names the round.
routed_iperf() {
	local tag=$1 dir n
	for dir in "" -R; do
		in_a "${RUN_ENV[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/c$tag$dir.log" \
			timeout -s KILL 20 iperf3 -c "$IP_C" -p 7701 -t 1 -J $dir >"$T_DIR/u$tag$dir.json" 2>&1 ||
			{ cat "$T_DIR/u$tag$dir.json" "$T_DIR/c$tag$dir.log"; fail "iperf3 client $dir ($tag) under unet-run failed"; }
		grep -q "tcp connect $IP_C:7701: U-Net" "$T_DIR/c$tag$dir.log" || fail "iperf3 client $dir ($tag) not on U-Net"
		n=$(jq -r '.end.sum_received.bytes // 0' "$T_DIR/u$tag$dir.json")
		((n > 1000000)) || fail "iperf3 $dir ($tag) moved only $n bytes"
		note "iperf3 $tag ${dir:-(U-Net sends)}: $n bytes"
	done
}

t_routed_tcp() {
	command -v iperf3 >/dev/null || skip "iperf3 is not installed"
	local pid
	# shellcheck disable=SC2207
	RUN_ENV=(env $(unet_run_env))
	setup_routed
	RUN_ENV+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
	# GSO super-segments forwarded by the router are cut by it (skb mode
	# would hand U-Net what the kernel left uncut)
	in_b ethtool -K "$IF_B" tso off gso off >/dev/null 2>&1 || true
	ip netns exec "$NS_C" iperf3 -s -B "$IP_C" -p 7701 >"$T_DIR/ks.out" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	local i
	for ((i = 0; i < 50; i++)); do
		ip netns exec "$NS_C" ss -ltn | grep -q ":7701 " && break
		sleep 0.1
	done
	routed_iperf plain
	# A 1200-byte link behind the router that c does not tell of: its
	# route sends 1200-byte frames but advertises an MSS of 1460.  a's
	# route says mtu 1200: its segments must follow the route, not the
	# peer's MSS (the router drops larger ones, DF).
	ip -n "$NS_B" link set "$IF_RC" mtu 1200 || fail "link mtu 1200"
	ip -n "$NS_C" route replace default via 10.202.0.1 mtu 1200 advmss 1460 || fail "c's route"
	ip -n "$NS_A" route replace default via "$GW1" mtu 1200 || fail "route mtu"
	# lwIP sends without DF: a segment too large for the route would
	# still arrive, cut by the router.  None may be.
	local frag_before frag_after
	frag_before=$(router_frags)
	routed_iperf mtu1200
	frag_after=$(router_frags)
	note "router fragmented $((frag_after - frag_before)) datagrams"
	((frag_after == frag_before)) || fail "U-Net sent segments larger than the route MTU (the router cut them)"
	kill -TERM "$pid"
	unet_bg_wait "$pid" 10 || true
}
