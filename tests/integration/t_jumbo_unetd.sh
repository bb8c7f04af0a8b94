# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_jumbo_unetd.sh - endpoints from unetd at a jumbo MTU: a direct grant
# bound with multi-buffer, an emulated client whose messages in pieces
# lie, and UDP and TCP over both kinds against the kernel's sockets
# (with an emulated client's lying UDP and TCP frames in pieces).  Sourced by run.sh (see lib.sh for the helpers; t_jumbo.sh
# for set_mtu and jumbo_unetd, t_unetd.sh for start_unetd).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"jumbo_grant|-|60|MTU 9000, a direct grant to user nobody: max_payload 8992 (multi-buffer), every size from 1700 (a chunk's edge) to it reaches root's echo and comes back byte for byte, one more refused"
	"jumbo_unetd_inet|-|90|MTU 9000, UDP and TCP over an emulated endpoint of user nobody against the kernel's sockets: max_payload 8972, datagrams around one, two, three and five chunks and up to 8972 both ways byte for byte, 8973 refused; 2 MiB of TCP both ways, every byte checked, in 8960-byte segments; forged UDP and TCP frames in pieces (a foreign source port or address in a later piece, IP and UDP lengths that do not add up, a fragment, a TCP header past the frame, a source rewritten after its piece was taken; from 4096-byte frames, a datagram in one descriptor longer than the daemon's buffers, honest and from a foreign port) never leave, each counted, only the honest ones reach namespace a"
	"jumbo_unetd_forge|-|60|MTU 9000, an emulated client (user nobody) whose messages in pieces lie (lengths that do not add up, a piece outside its segment or frame, a foreign source tag or MAC in the second piece, a foreign destination, 19 pieces, longer than a frame, a header rewritten after its piece was taken): none reaches the wire, each counted by reason, unetctl stats shows them; a client scribbling its region for 2 s lets no bad frame out; the daemon then serves the next client's jumbo messages"
)

t_jumbo_grant() {
	T_MODE=${T_MODE:-skb}
	local log pid
	setup_ns
	set_mtu 9000
	attach a
	start_unetd "user 65534 kinds direct tags 1-100" --grant-queues 0x1
	log=$T_DIR/echo.log
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$log" "$pid" >/dev/null
	as_nobody timeout 40 "$PEER" sizes "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--min-size 1700 --timeout 5 >"$T_DIR/sizes.log" 2>&1 ||
		{ tail -5 "$T_DIR/sizes.log"; fail "nobody's sizes over a grant failed"; }
	grep -E '^ready|^sizes' "$T_DIR/sizes.log"
	grep -q '^ready .*max_payload=8992 ' "$T_DIR/sizes.log" ||
		fail "the granted endpoint does not follow MTU 9000 (want max_payload 8992)"
	grep -qx 'sizes ok 1700..8992' "$T_DIR/sizes.log" || fail "not every size reached the echo and back"
	grep -q 'direct endpoint .* for uid 65534' "$T_DIR/unetd.log" || fail "no direct grant logged"
	stop "$pid" "$log" "echo on a"
	stop_unetd
}

t_jumbo_unetd_forge() {
	T_MODE=${T_MODE:-skb}
	local s f rc before after i k out AS drops=()
	setup_ns
	set_mtu 9000
	attach a
	start_unetd "user 65534 kinds emulated tags 1-100"
	unet_bg_a "$PEER" hold "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --timeout 30 \
		--expect 2 >"$T_DIR/hold.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/hold.log" "$s" >/dev/null
	before=$(stat_a rx)
	# The forge keeps its endpoint once done, for unetctl stats to see.
	as_user_cmd 65534
	"${AS[@]}" timeout -k 3 30 "$BUILD/tools/unet-forge-pieces" "$IF_B" --tag 2 \
		--peer "$MAC_A" --peer-tag 1 --linger 20 >"$T_DIR/forge.log" 2>&1 &
	f=$!
	_UNET_BG_PIDS+=("$f")
	wait_line "$T_DIR/forge.log" '^pieces ' "$f" || { cat "$T_DIR/forge.log"; fail "the forge did not finish"; }
	out=$(in_b env UNET_DAEMON_SOCKET="$UNETD_SOCK" "$UNETCTL" --json stats "$IF_B") || fail "unetctl stats $IF_B: $out"
	echo "$out" | jq -c '{unetd_rx_bad_pieces, unetd_rx_no_jumbo_slot, unetd_endpoints}'
	jq_is "the forge's refused chains in unetctl stats" "$out" \
		'.unetd_rx_bad_pieces == 0 and (.unetd_endpoints | map(select(.uid == 65534 and .tx_bad_pieces == 2 and .tx_sent == 2)) | length == 1)'
	kill -TERM "$f" 2>/dev/null
	unet_bg_wait "$f" 10
	rc=$?
	cat "$T_DIR/forge.log"
	((rc == 0)) || fail "the daemon did not refuse and count each lying chain as it must"
	# The second honest message is the forge's last frame: once the hold
	# has it, everything before it has reached a's program.
	wait_lines "$T_DIR/hold.log" '^got ' 2
	kill -INT "$s" 2>/dev/null
	unet_bg_wait "$s" 10
	cat "$T_DIR/hold.log"
	grep -q 'received=2 foreign=0' "$T_DIR/hold.log" || fail "the peer did not get exactly the 2 honest messages"
	after=$(stat_a rx)
	note "frames that reached $IF_A's program: $((after - before))"
	((after - before == 2)) || fail "$((after - before)) frames reached the peer, want the 2 honest ones"

	# A client rewriting its region at random for 2 s, its descriptors'
	# flag of a frame in pieces too (unet-forge --hostile, as in
	# unetd_hostile, here with the daemon gathering pieces); then the
	# daemon serves the next client, in pieces too, and let no bad frame
	# out meanwhile.
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --timeout 30 \
		>"$T_DIR/echo.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$s" >/dev/null
	for k in drop_malformed drop_version drop_wrong_src; do
		drops+=("$(stat_a "$k")")
	done
	as_nobody timeout 20 "$BUILD/tools/unet-forge" "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--hostile 2 --seed 0x6a756d62 >"$T_DIR/hostile.log" 2>&1 ||
		{ cat "$T_DIR/hostile.log"; fail "the hostile tool failed"; }
	grep '^hostile ' "$T_DIR/hostile.log"
	kill -0 "$UNETD_PID" 2>/dev/null || { tail -20 "$T_DIR/unetd.log"; fail "the daemon died under the hostile region"; }
	as_nobody timeout 30 "$PEER" sizes "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--min-size 8900 --timeout 5 >"$T_DIR/sizes.log" 2>&1 ||
		{ tail -5 "$T_DIR/sizes.log"; fail "the next client's sizes through unetd failed"; }
	grep -qx 'sizes ok 8900..8992' "$T_DIR/sizes.log" || fail "the next client was not served up to 8992"
	i=0
	for k in drop_malformed drop_version drop_wrong_src; do
		((drops[i] == $(stat_a "$k"))) || fail "$k rose on $IF_A: the daemon let a bad frame out"
		i=$((i + 1))
	done
	stop "$s" "$T_DIR/echo.log" "echo on a"
	stop_unetd
}

# Datagram sizes where a frame needs another piece: on the client's send
# (1790 bytes a piece of its 2048-byte frames: UDP payloads 1748 and
# 3538) and on the daemon's delivery to it (2046 bytes a piece: 2004,
# 4050, 8142), and the top.
JUMBO_UNETD_UDP_WINDOWS=(1..4 1740..1760 1995..2010 3530..3545 4045..4056 8138..8146 8960..8972)

# nobody_udp_echo LOG KIND: user nobody's U-Net UDP echo on $IP_B:7000
# (b), its output in LOG, its pid in UNET_BG_PID; it must get a KIND
# (emulated or direct) endpoint from unetd and follow MTU 9000
# (max_payload 8972).
nobody_udp_echo() {
	local log=$1 kind=$2
	as_user_cmd 65534
	"${AS[@]}" "$UUDP" echo "$IF_B" --local "$IP_B:7000" --copy --timeout 60 >"$log" 2>&1 &
	UNET_BG_PID=$!
	_UNET_BG_PIDS+=("$UNET_BG_PID")
	wait_ready "$log" "$UNET_BG_PID" >/dev/null
	grep -q "$kind endpoint" "$T_DIR/unetd.log" ||
		fail "the UDP echo did not get a $kind endpoint"
	grep -q "max_payload=8972 " "$log" ||
		fail "nobody's $kind UDP max_payload is not 8972: $(grep ready "$log")"
}

t_jumbo_unetd_inet() {
	T_MODE=${T_MODE:-skb}
	local UTCP=$BUILD/tools/unet-tcp TPEER=$ROOT/tests/tools/tcp-peer.py pid w lo hi n=0
	local bytes=$((2 << 20)) before after i windows=("${JUMBO_UNETD_UDP_WINDOWS[@]}")
	# Under the sanitizers: the daemon's checks of UDP and TCP in pieces
	# (the forge) and datagrams in pieces both ways; the TCP transfers,
	# the grant and the other sizes run in the plain pass of make check.
	[[ ${UNET_SANITIZED:-0} == 1 ]] && windows=(1740..1760 8960..8972)
	[[ -x $UTCP ]] || fail "$UTCP not built"
	setup_ns
	set_mtu 9000
	attach b
	# skb mode: the kernel's GSO super-segments come in more pieces than
	# a frame may have (t_jumbo_inet.sh, jumbo_tcp).
	in_a ethtool -K "$IF_A" tso off gso off >/dev/null 2>&1 || fail "ethtool -K $IF_A tso off gso off"
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7200"

	note "kernel UDP (a) -> nobody's U-Net UDP echo (b, emulated): ${windows[*]}"
	nobody_udp_echo "$T_DIR/uecho.log" emulated
	pid=$UNET_BG_PID
	for w in "${windows[@]}"; do
		lo=${w%..*} hi=${w#*..}
		in_a "$KUDP" sizes --local "$IP_A:7001" --remote "$IP_B:7000" --min "$lo" --max "$hi" \
			--timeout 20 >"$T_DIR/ksizes.log" 2>&1
		grep -qx "sizes ok $lo..$hi" "$T_DIR/ksizes.log" ||
			{ cat "$T_DIR/ksizes.log"; fail "kernel client -> nobody's echo failed in $w"; }
		n=$((n + hi - lo + 1))
	done
	stop "$pid" "$T_DIR/uecho.log" "nobody's U-Net echo"
	grep -qx "echo echoed=$n" "$T_DIR/uecho.log" || fail "nobody's echo did not echo exactly $n"

	note "nobody's U-Net UDP (b, emulated) -> kernel UDP echo (a): the same sizes, then 8973"
	unet_bg_a "$KUDP" echo --local "$IP_A:7100" --timeout 60 >"$T_DIR/kecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	for w in "${windows[@]}" 8973..8973; do
		lo=${w%..*} hi=${w#*..}
		as_nobody "$UUDP" sizes "$IF_B" --local "$IP_B:7101" --remote "$IP_A:7100" --min "$lo" \
			--max "$hi" --copy --timeout 20 >"$T_DIR/usizes.log" 2>&1
		if ((lo == 8973)); then
			grep -qx "sizes refused 8973: Message too long" "$T_DIR/usizes.log" ||
				{ cat "$T_DIR/usizes.log"; fail "8973 bytes were not refused with EMSGSIZE"; }
		else
			grep -qx "sizes ok $lo..$hi" "$T_DIR/usizes.log" ||
				{ cat "$T_DIR/usizes.log"; fail "nobody's client -> kernel echo failed in $w"; }
		fi
	done
	stop "$pid" "$T_DIR/kecho.log" "kernel echo"
	grep -qx "echo echoed=$n" "$T_DIR/kecho.log" ||
		fail "kernel echo did not echo exactly $n: $(cat "$T_DIR/kecho.log")"

	# Before any TCP, whose last segments (a reset for a port the
	# daemon let go) may still come to a while we count.
	note "nobody's UDP and TCP frames in pieces that lie: none leaves, each counted"
	# A sink that never answers: an answer to the forge's port after it
	# is gone would bring back an ICMP error to count.
	unet_bg_a python3 -c '
import signal, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
got = 0
def done(*_):
    print("sink got=%d" % got, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
print("ready kernel sink", flush=True)
while True:
    s.recv(65536)
    got += 1
' "$IP_A" 7100 >"$T_DIR/ksink-udp.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/ksink-udp.log" "$pid" >/dev/null
	before=$(ip_in_receives)
	as_nobody timeout 30 "$BUILD/tools/unet-forge-inet-pieces" "$IF_B" --local "$IP_B:7150" \
		--remote "$IP_A:7100" --peer "$MAC_A" >"$T_DIR/forge.log" 2>&1 ||
		{ cat "$T_DIR/forge.log"; fail "the daemon did not refuse and count each lying UDP or TCP chain"; }
	cat "$T_DIR/forge.log"
	# The daemon has taken every descriptor; what it sent may still be
	# on its way (the peer's backlog): wait for the honest three, then
	# count again once the sink is stopped.
	for ((i = 0; i < 100; i++)); do
		(($(ip_in_receives) - before >= 3)) && break
		sleep 0.05
	done
	stop "$pid" "$T_DIR/ksink-udp.log" "kernel sink"
	after=$(ip_in_receives)
	grep -qx "sink got=3" "$T_DIR/ksink-udp.log" ||
		fail "the kernel sink did not get exactly the 3 honest datagrams: $(cat "$T_DIR/ksink-udp.log")"
	note "IPv4 datagrams namespace a received from the forge: $((after - before))"
	((after - before == 3)) || fail "$((after - before)) IPv4 datagrams reached a, want the 3 honest ones"

	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		note "TCP and the direct grant: in the plain pass of make check"
		stop_unetd
		return 0
	fi

	note "kernel TCP source (a) -> nobody's U-Net sink (b, emulated), $bytes bytes"
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 60 sink --port 7002 --conns 1 \
		>"$T_DIR/usink.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/usink.log" "$pid" >/dev/null
	in_a timeout 40 python3 "$TPEER" source "$IP_B:7002" --bytes "$bytes" >"$T_DIR/ksrc.log" 2>&1 ||
		{ cat "$T_DIR/ksrc.log"; fail "kernel source -> nobody's sink failed"; }
	finish "$pid" "$T_DIR/usink.log" 10 "nobody's U-Net sink"
	grep -q "^sink conns=1 bytes=$bytes errors=0" "$T_DIR/usink.log" ||
		fail "nobody's sink did not get the $bytes bytes: $(grep '^sink' "$T_DIR/usink.log")"
	note "$(sed -n 's/ tcp_info: .*//p' "$T_DIR/ksrc.log")"
	grep -q "^source ok bytes=$bytes .* snd_mss=8960 " "$T_DIR/ksrc.log" ||
		fail "the kernel did not send 8960-byte segments to nobody's sink (its MSS option)"

	note "nobody's U-Net TCP source (b, emulated) -> kernel sink (a), $bytes bytes"
	unet_bg_a python3 "$TPEER" sink "$IP_A:7003" --conns 1 >"$T_DIR/ksink.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/ksink.log" "$pid" >/dev/null
	as_nobody "$UTCP" "$IF_B" --local "$IP_B" --timeout 40 source --remote "$IP_A:7003" \
		--bytes "$bytes" >"$T_DIR/usrc.log" 2>&1 ||
		{ cat "$T_DIR/usrc.log"; fail "nobody's source -> kernel sink failed"; }
	finish "$pid" "$T_DIR/ksink.log" 10 "kernel sink"
	grep -qx "sink conns=1 bytes=$bytes bad=0 rcv_mss=8960" "$T_DIR/ksink.log" ||
		fail "kernel sink: $(grep '^sink' "$T_DIR/ksink.log"), want $bytes bytes, none bad, 8960-byte segments"
	stop_unetd

	# A direct grant sends unchecked, as a root process does: its UDP
	# and TCP follow the MTU by themselves.  The largest datagrams and
	# 8960-byte segments from nobody's granted endpoint, briefly.
	UNETD_DIR=
	start_unetd "user 65534 kinds direct tags 1-100 udp 7000-7200" --grant-queues 0x1
	note "kernel UDP (a) -> nobody's U-Net UDP echo (b, direct grant): 8960..8972"
	nobody_udp_echo "$T_DIR/uecho-direct.log" direct
	pid=$UNET_BG_PID
	in_a "$KUDP" sizes --local "$IP_A:7001" --remote "$IP_B:7000" --min 8960 --max 8972 \
		--timeout 20 >"$T_DIR/ksizes-direct.log" 2>&1
	grep -qx "sizes ok 8960..8972" "$T_DIR/ksizes-direct.log" ||
		{ cat "$T_DIR/ksizes-direct.log"; fail "kernel client -> nobody's granted echo failed"; }
	stop "$pid" "$T_DIR/uecho-direct.log" "nobody's granted echo"
	note "nobody's U-Net TCP source (b, direct grant) -> kernel sink (a), $((bytes / 2)) bytes"
	unet_bg_a python3 "$TPEER" sink "$IP_A:7004" --conns 1 >"$T_DIR/ksink-direct.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/ksink-direct.log" "$pid" >/dev/null
	as_nobody "$UTCP" "$IF_B" --local "$IP_B" --timeout 40 --segment-mib 4 source \
		--remote "$IP_A:7004" --bytes $((bytes / 2)) >"$T_DIR/usrc-direct.log" 2>&1 ||
		{ cat "$T_DIR/usrc-direct.log"; fail "nobody's granted source -> kernel sink failed"; }
	finish "$pid" "$T_DIR/ksink-direct.log" 10 "kernel sink"
	grep -qx "sink conns=1 bytes=$((bytes / 2)) bad=0 rcv_mss=8960" "$T_DIR/ksink-direct.log" ||
		fail "kernel sink (direct): $(grep '^sink' "$T_DIR/ksink-direct.log")"
	stop_unetd
}

# Namespace a's count of IPv4 datagrams received (before any check of
# theirs: a bad checksum counts too).
ip_in_receives() {
	in_a awk '/^Ip: [0-9]/ { print $4 }' /proc/net/snmp
}
