# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetd_chan6.sh - routable IPv6 channels (U-Net inside UDP/IPv6)
# opened by unetd's clients: as t_unetd_chan.sh's IPv4 ones, the daemon
# decides their headers and holds their source ports, and checks every
# frame an emulated endpoint sends on one.  The daemon and its clients
# (user nobody) are in namespace b, their peers in a are root's own
# endpoints, on the link (fd01::/64).  Sourced by run.sh (start_unetd,
# as_nobody and the rest come from t_unetd.sh, the unetd_chan_* helpers
# shared with the IPv4 tests from t_unetd_chan.sh, v6_enable from
# t_udp6.sh, set_mtu from t_jumbo.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetd_chan6|-|90|user nobody opens routable IPv6 channels through unetd, on an emulated endpoint and on a direct grant: every size 1..max_payload byte for byte both ways with a root peer on the link; an ungranted tag and a multicast peer refused, saying why; the daemon holds the channel's source port (no other IPv6 socket gets it) and frees it with the client; opens to silent on-link IPv4 and IPv6 neighbours (emulated and granted) fail with EHOSTUNREACH after the client's second each, and ten daemon status requests are answered while an emulated client's run"
	"unetd_chan6_forge|-|60|MTU 9000, an emulated client writes frames on its routable IPv6 channel into its region: from another address, source port or tag, as IPv4, to another address, MAC or peer tag, raw U-Net, a hop limit of 0, an extension header, IPv6, UDP and U-Net lengths that do not add up, a wrong UDP checksum and none, a traffic class; and in two pieces (split inside the source address) honest, from another address, with a payload byte changed after the checksum, to another address: each refused and counted by reason, only the three honest messages reach the peer (a capture on its interface)"
)

UNETD_CHAN6_A=fd01::1
UNETD_CHAN6_B=fd01::2

# unetd_chan6_link: IPv6 on the link a --- b, global addresses at once
# (no duplicate address detection), each side's neighbour resolved.
unetd_chan6_link() {
	v6_enable "$NS_A" "$IF_A"
	v6_enable "$NS_B" "$IF_B"
	{ ip -n "$NS_A" addr add "$UNETD_CHAN6_A/64" dev "$IF_A" nodad &&
		ip -n "$NS_B" addr add "$UNETD_CHAN6_B/64" dev "$IF_B" nodad; } ||
		fail "addressing the link for IPv6"
	in_a ping -6 -c 1 -W 5 "$UNETD_CHAN6_B" >/dev/null || fail "a cannot ping $UNETD_CHAN6_B"
	in_b ping -6 -c 1 -W 5 "$UNETD_CHAN6_A" >/dev/null || fail "b cannot ping $UNETD_CHAN6_A"
}

# unetd_silent_opens LOG ADDR...: nobody opens a routable channel (tag 6)
# to each ADDR in turn, a line each in LOG, then "opens done".
unetd_silent_opens() {
	local log=$1 a out
	shift
	for a; do
		out=$(as_nobody "$PEER" hold "$IF_B" --tag 6 --peer-ip "$a" --peer-tag 1 --timeout 10 2>&1)
		echo "$a: $out" >>"$log"
	done
	echo "opens done" >>"$log"
}

t_unetd_chan6() {
	[[ ${UNET_SANITIZED:-0} == 1 ]] &&
		skip "runs in the plain pass of make check (the daemon's IPv6 check runs under the sanitizers in unetd_chan6_forge)"
	T_MODE=${T_MODE:-skb}
	local s i port out
	setup_ns
	attach a
	unetd_chan6_link
	start_unetd "user 65534 kinds emulated tags 1-100 channels 4"
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer-ip "$UNETD_CHAN6_B" --peer-tag 2 \
		--timeout 60 >"$T_DIR/echo.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$s" >/dev/null

	note "emulated: every size, both ways"
	unetd_chan_sizes emulated "$UNETD_CHAN6_A" "routable IPv6 channel"
	grep -q 'emulated endpoint' "$T_DIR/unetd.log" || fail "the client did not get an emulated endpoint"

	note "refused as IPv4 ones are, saying why: a tag the policy does not give, a peer that is not unicast"
	out=$(as_nobody "$PEER" hold "$IF_B" --tag 200 --peer-ip "$UNETD_CHAN6_A" --peer-tag 1 --timeout 5 2>&1) &&
		fail "a routable IPv6 channel on a tag not granted was opened: $out"
	grep -q 'tag 200 not granted' <<<"$out" || fail "the ungranted tag's refusal did not say why: $out"
	out=$(as_nobody "$PEER" hold "$IF_B" --tag 5 --peer-ip ff02::1 --peer-tag 1 --timeout 5 2>&1) &&
		fail "a routable IPv6 channel to a multicast peer was opened: $out"
	grep -q 'peer ff02::1 is not a unicast address' <<<"$out" || fail "the multicast peer's refusal did not say why: $out"

	note "the source port is the daemon's (an IPv6 socket of its), free again when the client goes"
	port=$(chan_sport 3)
	unetd_chan_hold_bg "$T_DIR/hold.log" --tag 3 --peer-ip "$UNETD_CHAN6_A" --peer-tag 1 --timeout 30
	i=$UNETD_CHAN_HOLD_PID
	unetd_chan_port_taken "$port" AF_INET6 :: "IPv6 "
	unetd_chan_killed_frees "$i" "$port" client

	note "a client's opens to silent neighbours (IPv4 and IPv6, a second each) keep nobody else waiting"
	# The daemon asks the kernel to resolve and answers at once; the
	# client's library asks again.  Ten status requests all come back
	# while the three opens take their three seconds; a daemon that waited
	# on the network would answer each behind one of the opens.
	: >"$T_DIR/silent.log"
	unetd_silent_opens "$T_DIR/silent.log" 10.201.0.77 fd01::77 10.201.0.78 &
	i=$!
	_UNET_BG_PIDS+=("$i")
	for ((rc = 0; rc < 100; rc++)); do
		[[ -n $(in_b ip neigh show 10.201.0.77) ]] && break
		sleep 0.05
	done
	[[ -n $(in_b ip neigh show 10.201.0.77) ]] || fail "the first silent open never asked the kernel for 10.201.0.77"
	for ((rc = 0; rc < 10; rc++)); do
		ctl_b --socket "$UNETD_SOCK" daemon status >/dev/null || fail "unetctl daemon status failed while a client opened channels"
	done
	grep -q '^opens done' "$T_DIR/silent.log" &&
		{ cat "$T_DIR/silent.log"; fail "the daemon's status requests waited behind a client's opens to silent neighbours"; }
	unet_bg_wait "$i" 30 || fail "the silent opens did not end"
	cat "$T_DIR/silent.log"
	(($(grep -c 'cannot open channel tag 6 .*No route to host' "$T_DIR/silent.log") == 3)) ||
		fail "not every open to a silent neighbour failed with EHOSTUNREACH"
	stop_unetd

	note "a direct grant: every size, both ways"
	start_unetd "user 65534 kinds emulated,direct tags 1-100" --grant-queues 0x1
	unetd_chan_sizes direct "$UNETD_CHAN6_A" "routable IPv6 channel"
	grep -q 'direct endpoint .* for uid 65534' "$T_DIR/unetd.log" || fail "the daemon did not log a direct grant"
	# A grant's open to a silent neighbour: the daemon does not wait
	# either (it says the next hop is being resolved), the client does.
	out=$(as_nobody "$PEER" hold "$IF_B" --tag 6 --peer-ip fd01::79 --peer-tag 1 --timeout 10 2>&1) &&
		fail "a grant's routable channel to a silent neighbour was opened: $out"
	{ grep -q 'next hop to fd01::79 is being resolved' <<<"$out" && grep -q 'No route to host' <<<"$out"; } ||
		fail "a grant's open to a silent neighbour did not fail with EHOSTUNREACH after the daemon's EAGAIN: $out"
	kill "$s" 2>/dev/null
	stop_unetd
}

t_unetd_chan6_forge() {
	T_MODE=${T_MODE:-skb}
	local c rc
	setup_ns
	set_mtu 9000
	# The peer is a's kernel, its interface without a program: the
	# capture sees every frame that reaches it, nothing taken first.
	unetd_chan6_link
	start_unetd "user 65534 kinds emulated tags 1-100"
	# 61955: the channel port the daemon's interface keeps (the default)
	unet_bg_a python3 "$ROOT/tests/tools/chan6-capture.py" "$IF_A" 61955 --timeout 40 \
		>"$T_DIR/capture.log" 2>&1
	c=$UNET_BG_PID
	wait_line "$T_DIR/capture.log" '^ready' "$c" || { cat "$T_DIR/capture.log"; fail "the capture did not start"; }
	as_nobody timeout 30 "$BUILD/tools/unet-forge-chan6" "$IF_B" --tag 2 \
		--peer-ip "$UNETD_CHAN6_A" --peer-tag 1 --other-ip fd01::99 >"$T_DIR/forge.log" 2>&1
	rc=$?
	cat "$T_DIR/forge.log"
	((rc == 0)) || fail "the daemon did not refuse and count each forged frame on the routable IPv6 channel as it must"
	# The last honest message is the forge's last frame: once the
	# capture has it, everything before it has reached a.
	wait_lines "$T_DIR/capture.log" '^chan .*honest=1' 3
	stop "$c" "$T_DIR/capture.log" "capture on a"
	cat "$T_DIR/capture.log"
	grep -qx 'capture chan=3 honest=3 other=0 kernel=[0-9]*' "$T_DIR/capture.log" ||
		fail "not exactly the 3 honest messages reached the peer"
	stop_unetd
}
