# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetd_tcp.sh - TCP over U-Net (lib/tcp) on endpoints unetd serves:
# the daemon holds the ports, routes their segments to the emulated
# endpoint that holds them, and checks every TCP segment such an
# endpoint sends.  Sourced by run.sh; uses t_unetd.sh's helpers
# (start_unetd, as_nobody).  The daemon and nobody's clients are in
# namespace b, the kernel's TCP peers in a.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetd_tcp|xdp|180|TCP over an emulated endpoint as user nobody against the kernel's TCP in namespace a: nobody's listener echoes every write size 1..65536 of a kernel client, and nobody's client (an ephemeral port from the daemon) gets every size back from a kernel echo, byte for byte; another endpoint listening on the same address gets none of those segments; the daemon holds each port with a kernel socket; a port the policy does not grant is refused; a SIGKILLed client's ports are released (its socket gone, the port usable again)"
	"unetd_tcp_direct|xdp|150|TCP over a direct grant as user nobody (the daemon holds the ports under the grant's slot): a kernel client's every write size through nobody's echo, and nobody's client through a kernel echo, byte for byte"
	"unetd_tcp_user_ports|-|120|unetd raises its open-file limit to the hard one; one user's TCP ports count together over its endpoints: nobody listening on ports across 3 endpoints holds 256 and the next is refused (EDQUOT), while another user still gets its port; all clients together hold at most --max-tcp-ports (300 here: the second user gets 44, then ENOSPC, and its 100 once the first is gone); a bad --max-tcp-ports is refused"
	"unetd_subuid_ports|-|90|the per-user bounds of ports are kept per accounting identity too (--subuid 'nobody:200000:100', a default rule for all): uid 200000 holds 256 TCP ports and is refused the next (EDQUOT), uid 200001 of the same range is refused its first (EDQUOT), uid 65533 outside the range gets its 10 (before: 256 more for every uid of the range, 12 of them held all of --max-tcp-ports; found by an attack review, repro/rev-subuid/tcp.sh)"
	"unetd_tcp_reuse|-|90|a port another user's kernel connection is bound to (SO_REUSEADDR, established) is refused to nobody's listener (the daemon reserves without SO_REUSEADDR), and the connection's segments keep going to the kernel: its second echo arrives"
	"unetd_tcp_forge|xdp|90|an emulated endpoint holding one TCP port forges segments from another address, from a port it does not hold, from a port another client holds, and with data offsets past the segment and below the header: the daemon drops and counts each (tx_foreign_tag, tx_bad_frame), and namespace a sees none of them, only the one honest SYN"
)

# unetd_tcp_setup [KIND] [UNETD_OPTION...]: namespaces, the program on b
# (where unetd serves), the daemon with TCP ports 7000-7200 for nobody's
# KIND of endpoint (emulated by default).  In skb mode a's
# segmentation offload goes off: generic XDP hands b's endpoint a's GSO
# super-segments whole, longer than a U-Net frame (t_tcp.sh, tcp_setup).
unetd_tcp_setup() {
	UTCP=$BUILD/tools/unet-tcp
	TPEER=$ROOT/tests/tools/tcp-peer.py
	[[ -x $UTCP ]] || fail "$UTCP not built"
	setup_ns
	attach b
	if [[ $T_MODE == skb ]]; then
		in_a ethtool -K "$IF_A" tso off gso off >/dev/null 2>&1 || fail "ethtool -K $IF_A tso off gso off"
	fi
	local kind=${1:-emulated}
	shift
	start_unetd "user 65534 kinds $kind tags 1-100 udp 7000-7200" "$@"
}

# b_listens PORT: whether a kernel socket listens on PORT in namespace b.
b_listens() {
	in_b ss -Hltn "sport = :$1" | grep -q .
}

# tcp_rounds KIND: a kernel client's sizes through nobody's U-Net echo on
# port 7000, then nobody's sizes (from an ephemeral port) through a
# kernel echo, byte for byte; the daemon holds the listening port with a
# kernel socket in b while the echo lives.
tcp_rounds() {
	local kind=$1 pid seg=32 by=
	# A grant's segment is locked memory: nobody's limit (8 MiB here,
	# which root cannot raise without CAP_SYS_RESOURCE) must hold it.
	[[ $kind == direct ]] && seg=4
	note "kernel client (a) -> nobody's U-Net echo (b, $kind)"
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 100 --segment-mib "$seg" \
		echo --port 7000 --conns 1 \
		>"$T_DIR/uecho-$kind.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/uecho-$kind.log" "$pid" >/dev/null
	grep -q "$kind endpoint" "$T_DIR/unetd.log" || fail "the TCP server did not get a $kind endpoint"
	b_listens 7000 || fail "no kernel socket holds nobody's listening port 7000 in b"
	if [[ $kind == emulated ]]; then
		# A bystander: another emulated endpoint on the same address,
		# newer (the daemon's lists put it first), listening on 7001.
		as_user_cmd 65534
		"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 100 echo --port 7001 \
			>"$T_DIR/bystander.log" 2>&1 &
		by=$!
		_UNET_BG_PIDS+=("$by")
		wait_ready "$T_DIR/bystander.log" "$by" >/dev/null
	fi
	in_a timeout 90 python3 "$TPEER" sizes "$IP_B:7000" >"$T_DIR/ksizes-$kind.log" 2>&1 ||
		{ cat "$T_DIR/ksizes-$kind.log"; fail "kernel sizes against nobody's U-Net echo ($kind) failed"; }
	cat "$T_DIR/ksizes-$kind.log"
	grep -q "^sizes ok 2112 sizes 1..65536" "$T_DIR/ksizes-$kind.log" || fail "not every size was checked"
	finish "$pid" "$T_DIR/uecho-$kind.log" 20 "nobody's U-Net echo ($kind)"
	if [[ -n $by ]]; then
		stop "$by" "$T_DIR/bystander.log" "the bystander"
		# The daemon routes a segment to the endpoint that holds its
		# port, no other.
		[[ $(tcpstat "$T_DIR/bystander.log" rx_frames) == 0 ]] ||
			fail "the bystander on port 7001 got segments for port 7000"
	fi
	grep -q "^echo conns=1 bytes=4302688 errors=0" "$T_DIR/uecho-$kind.log" ||
		fail "nobody's U-Net echo ($kind) did not echo exactly the stream"

	note "nobody's U-Net client (b, $kind, an ephemeral port) -> kernel echo (a)"
	unet_bg_a python3 "$TPEER" echo "$IP_A:7100" --conns 1 >"$T_DIR/kecho-$kind.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho-$kind.log" "$pid" >/dev/null
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 90 --segment-mib "$seg" \
		sizes --remote "$IP_A:7100" \
		>"$T_DIR/usizes-$kind.log" 2>&1 ||
		{ cat "$T_DIR/usizes-$kind.log"; fail "nobody's U-Net sizes ($kind) against the kernel echo failed"; }
	cat "$T_DIR/usizes-$kind.log"
	grep -q "^sizes ok 2112 sizes 1..65536" "$T_DIR/usizes-$kind.log" || fail "not every size was checked"
	finish "$pid" "$T_DIR/kecho-$kind.log" 10 "kernel echo"
}

t_unetd_tcp() {
	local pid i out
	unetd_tcp_setup
	tcp_rounds emulated

	note "a port outside the policy"
	out=$(as_nobody "$UTCP" "$IF_B" --local "$IP_B" --timeout 5 echo --port 9000 2>&1)
	echo "port 9000: $out"
	grep -q 'TCP port 9000 not granted' <<<"$out" || fail "a TCP port outside the policy was not refused clearly"
	b_listens 9000 && fail "a refused port is held"

	note "a SIGKILLed client's ports are released"
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 60 echo --port 7002 >"$T_DIR/ukill.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/ukill.log" "$pid" >/dev/null
	b_listens 7002 || fail "no kernel socket holds port 7002 while its client lives"
	kill -KILL "$pid"
	unet_bg_wait "$pid" 10
	for ((i = 0; i < 100; i++)); do
		b_listens 7002 || break
		sleep 0.05
	done
	b_listens 7002 && fail "the daemon still holds port 7002 after its client was killed"
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 60 echo --port 7002 >"$T_DIR/uagain.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/uagain.log" "$pid" >/dev/null
	stop "$pid" "$T_DIR/uagain.log" "the second listener on port 7002"
	stop_unetd
}

# The same over a direct grant (the daemon keeps no queue for itself).
t_unetd_tcp_direct() {
	unetd_tcp_setup direct --grant-queues 0x1
	tcp_rounds direct
	stop_unetd
}

t_unetd_tcp_forge() {
	local other cnt out
	unetd_tcp_setup
	# Another client of nobody's holds port 7050.
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 60 echo --port 7050 >"$T_DIR/other.log" 2>&1 &
	other=$!
	_UNET_BG_PIDS+=("$other")
	wait_ready "$T_DIR/other.log" "$other" >/dev/null
	# What reaches namespace a, counted on its interface (before its TCP).
	unet_bg_a python3 "$ROOT/tests/tools/tcp-count.py" "$IF_A" 7999 7998 >"$T_DIR/count.log" 2>&1
	cnt=$UNET_BG_PID
	wait_ready "$T_DIR/count.log" "$cnt" >/dev/null
	as_nobody "$BUILD/tools/unet-forge-tcp" "$IF_B" --local "$IP_B:7010" --remote "$IP_A:7999" \
		--forge-addr 10.201.0.77 --other 7050 --honest 7998 >"$T_DIR/forge.log" 2>&1
	out=$?
	cat "$T_DIR/forge.log"
	# The honest SYN has had time to arrive once the forger saw its send
	# completed; the counter's socket reads what the link brought.
	stop "$cnt" "$T_DIR/count.log" "the counter in a"
	grep -qx "tcp-count 7999=0 7998=1" "$T_DIR/count.log" ||
		fail "namespace a did not see exactly the one honest segment: $(tail -1 "$T_DIR/count.log")"
	((out == 0)) || fail "the daemon let a forged TCP segment go, or did not count it"
	stop "$other" "$T_DIR/other.log" "the other client"
	stop_unetd
}

t_unetd_tcp_user_ports() {
	T_MODE=${T_MODE:-skb}
	local hog out
	# As systemd starts it: a soft open-file limit of 1024 below the
	# hard one (this test's process only).
	(($(ulimit -Hn) > 1024)) && ulimit -Sn 1024
	setup_ns
	attach b
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7999 endpoints 4
user 65533 kinds emulated tags 101-200 udp 8000"
	# Its ports are its sockets: the daemon runs at its hard open-file
	# limit, not at a soft one like systemd's 1024.
	local soft hard
	read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$UNETD_PID/limits")
	note "unetd's open-file limit: soft $soft, hard $hard"
	[[ $soft == "$hard" ]] || fail "unetd runs with $soft open files of its hard limit $hard"
	local AS
	as_user_cmd 65534
	"${AS[@]}" "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 7000 3 200 30 >"$T_DIR/hog.log" 2>&1 &
	hog=$!
	_UNET_BG_PIDS+=("$hog")
	wait_line "$T_DIR/hog.log" '^held ' "$hog"
	cat "$T_DIR/hog.log"
	grep -qx 'held 256 refused EDQUOT' "$T_DIR/hog.log" ||
		fail "one user's endpoints held other than 256 TCP ports before EDQUOT: $(grep '^held' "$T_DIR/hog.log")"
	out=$(as_user 65533 "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 8000 1 1 0 2>&1)
	echo "uid 65533: $out"
	[[ $out == *"held 1 refused"* ]] || fail "another user got no port beside the first user's 256: $out"
	kill -TERM "$hog"
	unet_bg_wait "$hog" 10 >/dev/null
	stop_unetd
	# All clients together: at most --max-tcp-ports (here 300), so that
	# users at their 256 fill the daemon's share, not the interface's
	# table.
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7999 endpoints 4
user 65533 kinds emulated tags 101-200 udp 8000-8099" --max-tcp-ports 300
	as_user_cmd 65534
	"${AS[@]}" "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 7000 3 200 30 >"$T_DIR/hog2.log" 2>&1 &
	hog=$!
	_UNET_BG_PIDS+=("$hog")
	wait_line "$T_DIR/hog2.log" '^held ' "$hog"
	grep -qx 'held 256 refused EDQUOT' "$T_DIR/hog2.log" || fail "nobody: $(grep '^held' "$T_DIR/hog2.log")"
	out=$(as_user 65533 "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 8000 1 100 0 2>&1)
	echo "uid 65533 beside 256 of nobody's, under --max-tcp-ports 300: $out"
	[[ $out == *"held 44 refused ENOSPC"* ]] || fail "the daemon's clients held other than 300 ports together: $out"
	kill -TERM "$hog"
	unet_bg_wait "$hog" 10 >/dev/null
	# Once nobody's ports are gone, uid 65533 gets its 100.
	out=$(as_user 65533 "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 8000 1 100 0 2>&1)
	[[ $out == *"held 100 refused none"* || $out == *"held 100 refused"* ]] ||
		fail "uid 65533 alone did not get its 100 ports: $out"
	stop_unetd
	out=$("$BUILD/unetd" --max-tcp-ports 0 2>&1)
	[[ $? == 2 && $out == *"--max-tcp-ports takes 1..4096, not '0'"* ]] || fail "--max-tcp-ports 0 accepted: $out"
}

t_unetd_tcp_reuse() {
	T_MODE=${T_MODE:-skb}
	local k u go
	unetd_tcp_setup
	# The go file and the client's script where uid 65533 can reach them
	# (T_DIR and the clone may be 0700).
	go=$(mktemp -d /tmp/unet-reuse.XXXXXX) || fail "mktemp failed"
	T_CLEANUP+=("rm -rf '$go'")
	cp "$ROOT/tests/tools/tcp-reuse-client.py" "$go/" && chmod 755 "$go" && chmod 644 "$go/tcp-reuse-client.py" ||
		fail "cannot stage the client's script in $go"
	unet_bg_a python3 "$TPEER" echo "$IP_A:7100" --conns 1 >"$T_DIR/kecho.log" 2>&1
	wait_ready "$T_DIR/kecho.log" "$UNET_BG_PID" >/dev/null
	# uid 65533's kernel client from IP_B:7000, SO_REUSEADDR, established.
	ip netns exec "$NS_B" setpriv --reuid=65533 --regid=65533 --clear-groups \
		/usr/bin/python3 "$go/tcp-reuse-client.py" "$IP_B" 7000 "$IP_A" 7100 "$go/go" \
		>"$T_DIR/kc.log" 2>&1 &
	k=$!
	_UNET_BG_PIDS+=("$k")
	wait_line "$T_DIR/kc.log" '^ready' "$k"
	local AS
	as_user_cmd 65534
	"${AS[@]}" "$UTCP" "$IF_B" --local "$IP_B" --timeout 10 echo --port 7000 >"$T_DIR/u.log" 2>&1 &
	u=$!
	_UNET_BG_PIDS+=("$u")
	unet_bg_wait "$u" 10 && { cat "$T_DIR/u.log"; fail "nobody's listener on a port another user's connection holds started"; }
	cat "$T_DIR/u.log"
	grep -q "in use" "$T_DIR/u.log" || fail "nobody's listener was refused, but not because the port is in use"
	touch "$go/go"
	unet_bg_wait "$k" 10 || { cat "$T_DIR/kc.log"; fail "the kernel client failed"; }
	cat "$T_DIR/kc.log"
	grep -q "^second echo: b'two" "$T_DIR/kc.log" || fail "the other user's connection lost its second echo"
	stop_unetd
}

t_unetd_subuid_ports() {
	T_MODE=${T_MODE:-skb}
	local hog out
	setup_ns
	attach b
	printf 'nobody:200000:100\n' >"$T_DIR/subuid"
	chmod 644 "$T_DIR/subuid"
	start_unetd "default kinds emulated tags 1-1000 udp 7000-8999 endpoints 4" --subuid "$T_DIR/subuid"
	local AS
	as_user_cmd 200000
	"${AS[@]}" "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 7000 2 200 30 >"$T_DIR/hog.log" 2>&1 &
	hog=$!
	_UNET_BG_PIDS+=("$hog")
	wait_line "$T_DIR/hog.log" '^held ' "$hog"
	echo "uid 200000 (nobody's range): $(grep '^held' "$T_DIR/hog.log")"
	grep -qx 'held 256 refused EDQUOT' "$T_DIR/hog.log" ||
		fail "uid 200000 held other than 256 TCP ports before EDQUOT: $(cat "$T_DIR/hog.log")"
	out=$(as_user 200001 "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 7600 1 10 0 2>&1)
	echo "uid 200001 (the same range): $out"
	[[ $out == *"held 0 refused EDQUOT"* ]] ||
		fail "a second uid of nobody's range got TCP ports beside the range's 256: $out"
	out=$(as_user 65533 "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 8000 1 10 0 2>&1)
	echo "uid 65533 (no range): $out"
	[[ $out == *"held 10 refused"* ]] || fail "a uid outside the range did not get its 10 ports: $out"
	kill -TERM "$hog"
	unet_bg_wait "$hog" 10 >/dev/null
	stop_unetd
}
