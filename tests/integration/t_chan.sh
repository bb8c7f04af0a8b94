# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_chan.sh - routable channels: U-Net frames inside UDP/IPv4 between two
# namespaces over veth, byte for byte, and forged frames from a third
# party that never reach the endpoint.  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"chan_integrity|xdp|90|a routable channel (U-Net in UDP/IPv4) on a channel port set at attach: every payload size 1..max_payload both ways byte for byte, chan_delivered counted, no drops; unetctl channel add --peer-ip refuses a peer not in the neighbour table and lists --peer-port"
	"chan_spoof|xdp|90|routable channel: frames forged from another address, another source port, with a checksum or as a fragment are dropped by reason, never delivered; the channel's source port cannot be bound by another user on any address (one bound to 127.0.0.1 could send as the channel with IP_PKTINFO)"
)

CHAN_FORGE=$ROOT/tests/tools/chan-forge.py

# chan_sport TAG: the UDP source port of the channel with that local tag (unet_chan_sport).
chan_sport() {
	echo $(((($1 * 0x9E37) & 0x3FFF) | 0xC000))
}

# chan_neigh: each side resolves the other once, as the kernel does.
chan_neigh() {
	in_a ping -c 1 -W 2 "$IP_B" >/dev/null || fail "ping $IP_B from a failed"
	in_b ping -c 1 -W 2 "$IP_A" >/dev/null || fail "ping $IP_A from b failed"
}

t_chan_integrity() {
	setup_ns
	attach a
	attach b
	chan_neigh
	local want=1464 max log pid id s out
	# Both sides on a port of their own: frames sent to the default one
	# would go to the kernel, and nothing would be delivered.
	for s in a b; do
		ctl_"$s" attach "$([[ $s == a ]] && echo "$IF_A" || echo "$IF_B")" --mode "$T_MODE" \
			--chan-port 62000 >/dev/null || fail "attach --chan-port on $s failed"
	done
	[[ $(ctl_b --json status "$IF_B" | jq -r '[.. | objects | select(has("chan_port")) | .chan_port] | first') == 62000 ]] ||
		fail "status of $IF_B does not show chan_port 62000"
	log=$T_DIR/echo.log
	unet_bg_b "$PEER" echo "$IF_B" --tag 2 --peer-ip "$IP_A" --peer-tag 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1
	pid=$UNET_BG_PID
	id=$(wait_ready "$log" "$pid")

	note "unetctl channel add --peer-ip"
	out=$(ctl_b channel add "$IF_B" --endpoint "$id" --tag 3 --peer-ip 10.201.0.77 --peer-tag 4 2>&1) &&
		fail "channel add to a peer not in the neighbour table succeeded: $out"
	grep -q 'neighbour table' <<<"$out" || fail "channel add did not say why it failed: $out"
	ctl_b channel add "$IF_B" --endpoint "$id" --tag 3 --peer-ip "$IP_A" --peer-port 4000 \
		--peer-tag 4 >/dev/null || fail "channel add --peer-ip $IP_A failed"
	[[ $(chan_field b 3 peer_port) == 4000 && $(chan_field b 3 transport) == udp4 ]] ||
		fail "channel 3 is not listed as udp4 from port 4000: $(channel_json b)"
	ctl_b channel del "$IF_B" 3 >/dev/null || fail "channel del 3 failed"
	max=$(sed -n 's/^ready .*max_payload=\([0-9]*\).*/\1/p' "$log")
	[[ $max == "$want" ]] || fail "routable max_payload is '$max', want $want for MTU 1500"
	[[ $(chan_field b 2 transport) == udp4 ]] || fail "channel 2 on b is not listed as udp4: $(channel_json b)"
	[[ $(chan_field b 2 peer_ip) == "$IP_A" ]] || fail "channel 2 on b does not show peer_ip $IP_A"
	in_a "$PEER" sizes "$IF_A" --tag 1 --peer-ip "$IP_B" --peer-tag 2 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/sizes.log" 2>&1
	local rc=$?
	tail -3 "$T_DIR/sizes.log"
	((rc == 0)) || fail "sizes a -> b exited with $rc"
	grep -qx "sizes ok 1..$want" "$T_DIR/sizes.log" || fail "sizes did not report 'sizes ok 1..$want'"
	stop "$pid" "$log" "echo on b"
	grep -qx "echo echoed=$want foreign=0" "$log" || fail "echo on b did not echo exactly $want"
	expect_stat b chan_delivered "$want"
	expect_stat a chan_delivered "$want"
	local c s
	for s in a b; do
		for c in drop_malformed drop_unknown_tag drop_wrong_src drop_chan_ip drop_chan_frag \
			drop_chan_udplen drop_chan_csum drop_chan_kind; do
			expect_stat "$s" "$c" 0
		done
	done
}

t_chan_spoof() {
	setup_ns
	attach a
	attach b
	chan_neigh
	local k=5 port sport
	port=$(ctl_b --json status "$IF_B" | jq -r '[.. | objects | select(has("chan_port")) | .chan_port] | first // empty')
	[[ $port =~ ^[0-9]+$ ]] || fail "status of $IF_B shows no chan_port"
	sport=$(chan_sport 110)
	unet_bg_b "$PEER" hold "$IF_B" --tag 10 --peer-ip "$IP_A" --peer-tag 110 --expect 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/hold.log" 2>&1
	local h=$UNET_BG_PID
	wait_ready "$T_DIR/hold.log" "$h" >/dev/null
	forge() { in_a "$CHAN_FORGE" "$IF_A" "$MAC_B" "$@" >/dev/null || fail "chan-forge $* failed"; }

	note "a third party's address"
	forge 10.201.0.9 "$IP_B" "$sport" "$port" 10 110 $k
	expect_stat b drop_wrong_src $k
	note "the peer's address, another source port"
	forge "$IP_A" "$IP_B" $((sport ^ 1)) "$port" 10 110 $k
	expect_stat b drop_wrong_src $((2 * k))
	note "the peer's address and port, another peer tag"
	forge "$IP_A" "$IP_B" "$sport" "$port" 10 111 $k
	expect_stat b drop_wrong_src $((3 * k))
	[[ $(chan_field b 10 drop_wrong_src) == $((3 * k)) ]] ||
		fail "channel 10 drop_wrong_src is '$(chan_field b 10 drop_wrong_src)', want $((3 * k))"
	note "a UDP checksum, a fragment"
	forge "$IP_A" "$IP_B" "$sport" "$port" 10 110 $k --csum 4660
	expect_stat b drop_chan_csum $k
	forge "$IP_A" "$IP_B" "$sport" "$port" 10 110 $k --mf
	expect_stat b drop_chan_frag $k
	expect_stat b delivered 0
	grep -q '^got ' "$T_DIR/hold.log" && fail "the endpoint received a forged frame"

	note "another process cannot send as the channel: its source port is held"
	unet_bg_a "$PEER" hold "$IF_A" --tag 110 --peer-ip "$IP_B" --peer-tag 10 --expect 0 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/hold_a.log" 2>&1
	local ha=$UNET_BG_PID
	wait_ready "$T_DIR/hold_a.log" "$ha" >/dev/null
	# On every address: a socket bound to the port on 127.0.0.1 could
	# still send from $IP_A with IP_PKTINFO, and b would take it for the
	# channel.  As another user, as an attacker on the peer's host is.
	in_a setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "
import socket, sys
for a in ('$IP_A', '127.0.0.1', '0.0.0.0'):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((a, $sport))
    except OSError as e:
        if e.errno != 98:
            sys.exit(1)
        continue
    print('bound', a)
    sys.exit(2)" || fail "port $sport could be bound by another user while the channel holds it (rc $?)"
	stop "$ha" "$T_DIR/hold_a.log" "holder on a"

	note "control: one well-formed frame from the peer's address and port is delivered"
	forge "$IP_A" "$IP_B" "$sport" "$port" 10 110 1
	expect_stat b chan_delivered 1
	local i
	for ((i = 0; i < 40; i++)); do
		grep -q '^got ' "$T_DIR/hold.log" && break
		sleep 0.05
	done
	stop "$h" "$T_DIR/hold.log" "holder"
	grep -qx "got tag=10 len=32" "$T_DIR/hold.log" || fail "the control frame did not arrive as 32 bytes on tag 10"
	expect_stat b drop_wrong_src $((3 * k))
}
