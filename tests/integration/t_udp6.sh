# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_udp6.sh - UDP/IPv6 over U-Net (docs/udp.md, "IPv6") against the
# kernel's UDP/IPv6, on the link and across a router.  Sourced by run.sh
# (see lib.sh for the helpers; setup_routed is t_routed.sh's).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"udp6_sizes|xdp|60|U-Net UDP/IPv6 <-> kernel UDP/IPv6 on the link, a sweep of sizes up to 1452 both ways byte for byte, 1453 EMSGSIZE; the peer finds the U-Net-only address by neighbour solicitation, answered by the endpoint; unetctl udp list shows it"
	"udp6_routed|-|60|U-Net UDP/IPv6 <-> kernel UDP/IPv6 across a router both ways, next hop from the kernel's IPv6 routes and neighbours; a route mtu 1280: 1232 bytes go, 1233 get EMSGSIZE"
	"udp6_bad|-|60|hostile IPv6 frames (wrong and zero checksums, truncated, UDP length past the payload, hop-by-hop and fragment headers, a foreign destination, solicitations with hop limit 254 or a wrong checksum, datagrams from a group, ::1 or a v4-mapped source) never delivered, each counted; a U-Net port on an address the kernel also has is held in the kernel (another socket's bind fails), so fragments the XDP program passes reach no other socket; ::1 and a v4-mapped local address refused (EADDRNOTAVAIL)"
)

UUDP6_ADDR_A=fd00:201::1
UUDP6_ADDR_B=fd00:201::2

# v6_enable NS DEV...: IPv6 on (run.sh's namespaces start with it off),
# without duplicate address detection, so addresses work at once.
v6_enable() {
	local ns=$1 dev
	shift
	for dev in "$@"; do
		ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$dev.accept_dad=0" \
			"net.ipv6.conf.$dev.disable_ipv6=0" >/dev/null || fail "IPv6 on $dev in $ns"
	done
}

# The link: b's kernel has fd00:201::2; fd00:201::1 is U-Net's alone on a
# (the kernel there has only its link-local address, which it solicits
# from), with an on-link route so that a's kernel knows the prefix.
setup_v6_link() {
	v6_enable "$NS_A" "$IF_A"
	v6_enable "$NS_B" "$IF_B"
	{ ip -n "$NS_B" addr add "$UUDP6_ADDR_B/64" dev "$IF_B" nodad &&
		ip -n "$NS_A" -6 route add fd00:201::/64 dev "$IF_A"; } || fail "IPv6 addressing"
}

UUDP6=
KUDP6=
udp6_tools() {
	UUDP6=$BUILD/tools/unet-udp6
	KUDP6=$ROOT/tests/tools/udp6-kern.py
}

t_udp6_sizes() {
	local pid max=1452
	udp6_tools
	setup_ns
	setup_v6_link
	attach a
	# kernel client on b -> U-Net echo on a
	unet_bg_a "$UUDP6" echo "$IF_A" --local "[$UUDP6_ADDR_A]:7000" --xdp-mode "$T_MODE" \
		--timeout 40 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	grep -q "max_payload=$max" "$T_DIR/uecho.log" || fail "U-Net UDP/IPv6 max payload is not $max"
	local list
	list=$(ctl_a --json udp list "$IF_A") || fail "unetctl udp list failed"
	[[ $(jq -r '[.. | objects | select(has("port") and .port == 7000)] | first | .family + " " + .addr + " " + (.arp | tostring)' <<<"$list") == "ipv6 $UUDP6_ADDR_A true" ]] ||
		{ echo "$list"; fail "udp list does not show [$UUDP6_ADDR_A]:7000 as an IPv6 port answering ND"; }
	ctl_a udp list "$IF_A" | grep -q "$UUDP6_ADDR_A" || fail "text listing lacks $UUDP6_ADDR_A"
	in_b python3 "$KUDP6" sizes --local "[$UUDP6_ADDR_B]:7001" --remote "[$UUDP6_ADDR_A]:7000" \
		--max $max --timeout 20 >"$T_DIR/ksizes.log" 2>&1
	cat "$T_DIR/ksizes.log"
	grep -qx "sizes ok $max" "$T_DIR/ksizes.log" || fail "kernel client -> U-Net echo failed"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	cat "$T_DIR/uecho.log"
	local nd
	nd=$(counter a nd_delivered) || exit 1
	note "neighbour solicitations to the endpoint: $nd"
	((nd > 0)) || fail "b reached the U-Net-only address without a solicitation reaching the endpoint"
	grep -q "nd_rep=[1-9]" "$T_DIR/uecho.log" || fail "the endpoint answered no solicitation"
	ip -n "$NS_B" -6 neigh show "$UUDP6_ADDR_A" dev "$IF_B" | grep -qi "$MAC_A" ||
		fail "b's kernel did not learn $UUDP6_ADDR_A at $MAC_A"
	# U-Net client on a -> kernel echo on b
	unet_bg_b python3 "$KUDP6" echo --local "[$UUDP6_ADDR_B]:7100" --timeout 40 \
		>"$T_DIR/kecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	in_a "$UUDP6" sizes "$IF_A" --local "[$UUDP6_ADDR_A]:7101" --remote "[$UUDP6_ADDR_B]:7100" \
		--max $max --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/usizes.log" 2>&1
	cat "$T_DIR/usizes.log"
	grep -qx "sizes ok $max" "$T_DIR/usizes.log" || fail "U-Net client -> kernel echo failed"
	grep -qx "emsgsize ok" "$T_DIR/usizes.log" || fail "$((max + 1)) bytes past the MTU: not EMSGSIZE"
	stop "$pid" "$T_DIR/kecho.log" "kernel echo"
	for c in drop_udp_filter drop_ip_malformed drop_ip6_exthdr drop_no_socket; do
		expect_stat a "$c" 0
	done
}

# t_routed.sh's fixture, with IPv6: a (fd00:201::1, U-Net's; default via
# fd00:201::2) -- b, the router (fd00:201::2, fd00:202::1) -- c
# (fd00:202::2, default via fd00:202::1).
setup_v6_routed() {
	setup_routed
	v6_enable "$NS_A" "$IF_A"
	v6_enable "$NS_B" "$IF_B" "$IF_RC" all
	v6_enable "$NS_C" "$IF_C"
	{ in_b sysctl -qw net.ipv6.conf.all.forwarding=1 >/dev/null &&
		ip -n "$NS_B" addr add "$UUDP6_ADDR_B/64" dev "$IF_B" nodad &&
		ip -n "$NS_B" addr add fd00:202::1/64 dev "$IF_RC" nodad &&
		ip -n "$NS_C" addr add fd00:202::2/64 dev "$IF_C" nodad &&
		ip -n "$NS_C" -6 route add default via fd00:202::1 &&
		ip -n "$NS_A" -6 route add fd00:201::/64 dev "$IF_A" &&
		ip -n "$NS_A" -6 route add default via "$UUDP6_ADDR_B" dev "$IF_A"; } ||
		fail "IPv6 addressing of the routed fixture"
}

# Routing and the checks of the frames do not depend on the XDP mode (the
# program and the library are the same in both; test_xdp_prog runs every
# check of the program): these run once, each in one mode.
t_udp6_routed() {
	local pid max=1452
	T_MODE=skb
	udp6_tools
	setup_v6_routed
	unet_bg_a "$UUDP6" echo "$IF_A" --local "[$UUDP6_ADDR_A]:7000" --xdp-mode "$T_MODE" \
		--timeout 40 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	in_c python3 "$KUDP6" sizes --local "[fd00:202::2]:7001" --remote "[$UUDP6_ADDR_A]:7000" \
		--max $max --timeout 20 >"$T_DIR/ksizes.log" 2>&1
	cat "$T_DIR/ksizes.log"
	grep -qx "sizes ok $max" "$T_DIR/ksizes.log" || fail "kernel client (c) -> U-Net echo (a) across the router failed"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"

	ip netns exec "$NS_C" python3 "$KUDP6" echo --local "[fd00:202::2]:7100" --timeout 40 \
		>"$T_DIR/kecho.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	in_a "$UUDP6" sizes "$IF_A" --local "[$UUDP6_ADDR_A]:7101" --remote "[fd00:202::2]:7100" \
		--max $max --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/usizes.log" 2>&1
	cat "$T_DIR/usizes.log"
	grep -qx "sizes ok $max" "$T_DIR/usizes.log" || fail "U-Net client (a) -> kernel echo (c) across the router failed"
	# the frames went to the router's MAC: its neighbour entry, from a's kernel
	ip -n "$NS_A" -6 neigh show "$UUDP6_ADDR_B" dev "$IF_A" | grep -qi "$MAC_B" ||
		fail "a's kernel has no neighbour entry for the router"
	# a route MTU of 1280 (IPv6's minimum): 1232 bytes fit, 1233 do not
	ip -n "$NS_A" -6 route replace default via "$UUDP6_ADDR_B" dev "$IF_A" mtu 1280 ||
		fail "route mtu"
	in_a "$UUDP6" sizes "$IF_A" --local "[$UUDP6_ADDR_A]:7102" --remote "[fd00:202::2]:7100" \
		--max 1232 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/usizes_mtu.log" 2>&1
	cat "$T_DIR/usizes_mtu.log"
	grep -qx "sizes ok 1232" "$T_DIR/usizes_mtu.log" || fail "sizes up to the route MTU failed"
	grep -qx "emsgsize ok" "$T_DIR/usizes_mtu.log" || fail "1233 bytes past a route MTU of 1280: not EMSGSIZE"
	stop "$pid" "$T_DIR/kecho.log" "kernel echo"
}

t_udp6_bad() {
	local pid k n=3
	T_MODE=native
	udp6_tools
	setup_ns
	setup_v6_link
	attach a
	# b knows a's address for good: no solicitation of b's own (for the
	# port unreachable its kernel answers the echoes with) mixes with
	# the injected ones
	ip -n "$NS_B" -6 neigh replace "$UUDP6_ADDR_A" lladdr "$MAC_A" dev "$IF_B" nud permanent ||
		fail "static neighbour on b"
	unet_bg_a "$UUDP6" echo "$IF_A" --local "[$UUDP6_ADDR_A]:7000" --xdp-mode "$T_MODE" \
		--timeout 40 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	local sends=()
	for k in bad-csum zero-csum truncated long-udp hop-by-hop fragment ns-hop254 ns-bad-csum \
		src-group src-loopback src-mapped; do
		sends+=(--send "$k,$n,[$UUDP6_ADDR_A]:7000")
	done
	# our port on an address that is not ours (the kernel's), and last,
	# good ones
	sends+=(--send "good,$n,[fd00:201::99]:7000" --send "good,2,[$UUDP6_ADDR_A]:7000")
	in_b python3 "$KUDP6" inject "$IF_B" --dst-mac "$MAC_A" --local "[$UUDP6_ADDR_B]:7001" \
		"${sends[@]}" || fail "injecting"
	# The three odd sources reach the endpoint (the XDP program does not
	# judge sources) and the library drops them as malformed.
	expect_stat a udp_delivered $((5 * n + 2))
	expect_stat a drop_ip_malformed $((2 * n))
	expect_stat a drop_ip6_exthdr $((2 * n))
	expect_stat a nd_delivered "$n"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	cat "$T_DIR/uecho.log"
	grep -qx "echo echoed=2" "$T_DIR/uecho.log" || fail "something but the good datagrams was echoed"
	grep -q "bad_udp_csum=$((2 * n)) " "$T_DIR/uecho.log" || fail "wrong and zero checksums not counted"
	grep -q "malformed=$((4 * n)) " "$T_DIR/uecho.log" ||
		fail "the solicitation with a wrong checksum and the datagrams from a group, ::1 and a v4-mapped address not all counted"
	grep -q "nd_rep=0 " "$T_DIR/uecho.log" || fail "a hostile solicitation was answered"

	# A U-Net port on an address the kernel has too: the XDP program
	# passes what it cannot find the port of (a fragment, an extension
	# header) to the kernel, so the port is held there and no other
	# socket -- another user's -- can bind it and get those datagrams.
	ip -n "$NS_A" addr add fd00:201::3/64 dev "$IF_A" nodad || fail "a's kernel address"
	unet_bg_a "$UUDP6" echo "$IF_A" --local "[fd00:201::3]:7002" --xdp-mode "$T_MODE" \
		--timeout 20 >"$T_DIR/uecho2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho2.log" "$pid" >/dev/null
	in_a setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import errno, socket
for a in ("fd00:201::3", "::"):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        s.bind((a, 7002))
        print("bound", a)
    except OSError as e:
        print("refused", a, errno.errorcode.get(e.errno))
' >"$T_DIR/bind.out" 2>&1
	stop "$pid" "$T_DIR/uecho2.log" "U-Net echo on the kernel's address"
	cat "$T_DIR/bind.out"
	[[ $(grep -c "^refused .* EADDRINUSE$" "$T_DIR/bind.out") == 2 ]] ||
		fail "another user bound the port of a U-Net socket on the kernel's address"
	# Not addresses of a link: refused, so the endpoint never answers
	# solicitations for them nor sends from them.
	for k in ::1 ::ffff:10.201.0.1; do
		if in_a "$UUDP6" echo "$IF_A" --local "[$k]:7003" --xdp-mode "$T_MODE" --timeout 2 \
			>"$T_DIR/bad-local.log" 2>&1; then
			fail "a U-Net socket opened on $k"
		fi
		grep -q "Cannot assign requested address" "$T_DIR/bad-local.log" ||
			{ cat "$T_DIR/bad-local.log"; fail "opening $k: not EADDRNOTAVAIL"; }
	done
}
