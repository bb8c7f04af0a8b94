# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetd_chan.sh - routable channels (U-Net inside UDP/IPv4) opened by
# unetd's clients: the daemon decides their headers and holds their
# source ports; an emulated endpoint's frames on them are checked.  The
# daemon and its clients (user nobody) are in namespace b, their peers in
# a are root's own endpoints.  Sourced by run.sh (start_unetd, as_nobody
# and the rest come from t_unetd.sh, chan_sport and chan_neigh from
# t_chan.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetd_chan|-|90|user nobody opens routable channels through unetd, on an emulated endpoint and on a direct grant: every size byte for byte both ways with a root peer; the daemon holds the channel's source port (no other socket gets it) and a SIGKILLed client's port (emulated and granted) and tag are free again at once; the policy's channel quota refuses one more with EDQUOT"
	"unetd_chan_forge|-|60|an emulated client writes frames on its routable channel into its region: from another address, another source port, to another peer address, MAC or tag, from a tag not its own, raw U-Net on the routable channel, an IP fragment, bad IP, UDP and U-Net lengths, a bad checksum, the frame as IPv6 would carry it (from the IPv4 channel's tag): each refused and counted by reason, only the honest message reaches the peer's interface"
)

# unetd_chan_port_held PORT: whether a UDP socket in b has PORT.
unetd_chan_port_held() {
	[[ -n $(in_b ss -Hauln "sport = :$1") ]]
}

# unetd_chan_port_taken PORT AF ADDR FAMILY: a UDP socket in b holds the
# channel's source port PORT, and another socket (socket.AF, bound to
# ADDR; FAMILY names the channel's in the messages: "" or "IPv6 ") cannot
# have it.
unetd_chan_port_taken() {
	local out
	unetd_chan_port_held "$1" || fail "no socket holds the $4channel's source port $1"
	out=$(in_b python3 -c "import socket; socket.socket(socket.$2, socket.SOCK_DGRAM).bind(('$3', $1))" 2>&1) &&
		fail "another $4socket could bind the channel's source port $1"
	grep -q 'Address already in use' <<<"$out" || fail "binding the channel's port failed otherwise: $out"
}

# unetd_chan_sizes KIND PEER_IP WHAT: nobody's sizes over a routable
# channel WHAT (tag 2) of a KIND endpoint to the echo on a (tag 1, at
# PEER_IP), every size 1..max_payload both ways.
unetd_chan_sizes() {
	local kind=$1 log=$T_DIR/sizes-$1.log max
	as_nobody "$PEER" sizes "$IF_B" --tag 2 --peer-ip "$2" --peer-tag 1 \
		--timeout 40 >"$log" 2>&1 ||
		{ cat "$log"; fail "sizes over the $kind endpoint's $3 failed"; }
	tail -2 "$log"
	max=$(sed -n 's/^ready .*max_payload=\([0-9]*\).*/\1/p' "$log")
	((max > 1000)) || fail "the $kind $3's max_payload is '$max'"
	grep -qx "sizes ok 1..$max" "$log" || fail "$kind sizes did not report 'sizes ok 1..$max'"
}

# unetd_chan_hold_bg LOG ARGS...: nobody's peer holding the channels
# ARGS in the background (output in LOG) once ready; its pid in
# UNETD_CHAN_HOLD_PID.
unetd_chan_hold_bg() {
	local log=$1
	shift
	as_user_cmd 65534
	"${AS[@]}" "$PEER" hold "$IF_B" "$@" >"$log" 2>&1 &
	UNETD_CHAN_HOLD_PID=$!
	_UNET_BG_PIDS+=("$UNETD_CHAN_HOLD_PID")
	wait_ready "$log" "$UNETD_CHAN_HOLD_PID" >/dev/null
}

# unetd_chan_killed_frees PID PORT WHO: SIGKILL the holder PID; the
# daemon must free its channel's source port PORT (bounded wait).
unetd_chan_killed_frees() {
	local i
	kill -KILL "$1"
	unet_bg_wait "$1" 5
	for ((i = 0; i < 100; i++)); do
		unetd_chan_port_held "$2" || break
		sleep 0.05
	done
	unetd_chan_port_held "$2" && fail "the SIGKILLed $3's source port $2 is still held"
}

t_unetd_chan() {
	T_MODE=${T_MODE:-skb}
	local s port out i mac_b
	setup_ns
	attach a
	chan_neigh
	start_unetd "user 65534 kinds emulated tags 1-100 channels 2"
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer-ip "$IP_B" --peer-tag 2 --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$s" >/dev/null

	note "emulated: every size, both ways"
	unetd_chan_sizes emulated "$IP_A" "routable channel"

	note "the source port is the daemon's, the local tag's whatever the peer tag; a SIGKILLed client's is free at once"
	port=$(chan_sport 3)
	# A peer tag of the client's choosing must not choose the port.
	unetd_chan_hold_bg "$T_DIR/hold.log" --tag 3 --peer-ip "$IP_A" --peer-tag 5250 --timeout 30
	i=$UNETD_CHAN_HOLD_PID
	unetd_chan_port_taken "$port" AF_INET 127.0.0.1 ""

	# The quota (2): the held channel and one more, not a third.
	out=$(as_nobody "$PEER" hold "$IF_B" --tag 4 --peer-tag 1 --tag 5 --peer-tag 1 \
		--peer-ip "$IP_A" --timeout 5 2>&1)
	echo "$out" | tail -2
	grep -q 'cannot open channel tag 5.*quota' <<<"$out" || fail "a routable channel past the quota was not refused with EDQUOT: $out"

	unetd_chan_killed_frees "$i" "$port" client
	# Its tag too: another client opens it again.
	as_nobody "$PEER" hold "$IF_B" --tag 3 --peer-ip "$IP_A" --peer-tag 1 --timeout 1 \
		>"$T_DIR/hold2.log" 2>&1
	grep -q '^ready ' "$T_DIR/hold2.log" || { cat "$T_DIR/hold2.log"; fail "the SIGKILLed client's tag 3 could not be opened again"; }
	stop_unetd

	note "a direct grant: every size, both ways"
	start_unetd "user 65534 kinds emulated,direct tags 1-100" --grant-queues 0x1
	unetd_chan_sizes direct "$IP_A" "routable channel"
	grep -q 'direct endpoint .* for uid 65534' "$T_DIR/unetd.log" || fail "the daemon did not log a direct grant"
	# The grant's frames carry the device's MAC (the daemon has no
	# endpoint of its own here to take it from).
	mac_b=$(in_b cat "/sys/class/net/$IF_B/address")
	tail -1 < <(grep '^echo src_mac' "$T_DIR/echo.log") | grep -qx "echo src_mac $mac_b" ||
		{ grep '^echo src_mac' "$T_DIR/echo.log"; fail "the grant's frames do not come from $IF_B's MAC $mac_b"; }
	# The grant's port is the daemon's too, and goes with the client.
	unetd_chan_hold_bg "$T_DIR/hold-direct.log" --tag 3 --peer-ip "$IP_A" --peer-tag 1 --timeout 30
	i=$UNETD_CHAN_HOLD_PID
	unetd_chan_port_held "$port" || fail "no socket holds the grant's channel source port $port"
	unetd_chan_killed_frees "$i" "$port" grant
	kill "$s" 2>/dev/null
	stop_unetd
}

t_unetd_chan_forge() {
	T_MODE=${T_MODE:-skb}
	local s rc before after
	setup_ns
	attach a
	in_a sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
	in_b sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
	chan_neigh
	start_unetd "user 65534 kinds emulated tags 1-100"
	unet_bg_a "$PEER" hold "$IF_A" --tag 1 --peer-ip "$IP_B" --peer-tag 2 --timeout 20 \
		--expect 2 >"$T_DIR/hold.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/hold.log" "$s" >/dev/null
	before=$(stat_a rx)
	as_nobody "$BUILD/tools/unet-forge-chan" "$IF_B" --tag 2 --peer-ip "$IP_A" --peer-tag 1 \
		--other-ip 10.201.0.99 >"$T_DIR/forge.log" 2>&1
	rc=$?
	cat "$T_DIR/forge.log"
	((rc == 0)) || fail "the daemon did not refuse and count each forged frame on the routable channel as it must"
	kill -INT "$s" 2>/dev/null
	unet_bg_wait "$s" 10
	after=$(stat_a rx)
	cat "$T_DIR/hold.log"
	note "frames that reached $IF_A's program: $((after - before))"
	((after - before == 2)) || fail "$((after - before)) frames reached the peer, want the 2 honest ones"
	grep -q 'received=2 foreign=0' "$T_DIR/hold.log" || fail "the peer did not get exactly the 2 honest messages"
	stop_unetd
}
