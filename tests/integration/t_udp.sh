# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_udp.sh - UDP/IPv4 over U-Net (docs/udp.md) against the kernel's UDP.
# Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"udp_sizes|xdp|150|U-Net UDP <-> kernel UDP, every size 1..1472 both ways byte for byte, with and without tx checksum offload (partial checksums)"
	"udp_ports|xdp|120|UDP ports on one host each reach their own endpoint (disjoint queues); other ports, ping still reach the kernel; unetctl udp list/del"
	"udp_arp|xdp|90|U-Net-owned address: the endpoint answers ARP; cache expiry re-resolves; kernel-owned address: the kernel answers"
	"udp_bad|xdp|90|bad IP/UDP checksums, truncated headers, fragments, filtered sources, a datagram past max_payload (in the 18 bytes veth takes past its MTU): never delivered as data, each counted; IP options skipped, delivered"
	"udp_sigkill|xdp|60|SIGKILLed UDP owner: port stale, reclaimed, the kernel gets the port back"
	"udp_arp_storm|xdp|90|5000 ARP requests for the U-Net-owned address: replies rate-limited (counted), a concurrent kernel client's 200 datagrams all echoed"
	"udp_arp_poison|xdp|90|ARP with a spoofed sha, unsolicited replies, requests naming another MAC: the endpoint's datagrams still go to the real peer"
	"udp_unreach|xdp|60|sends to a peer that never answers ARP fail fast (-EAGAIN while asking, then -EHOSTUNREACH), a bounded number of ARP requests"
)

# The endpoint answers at most this many ARP requests a second (after a
# burst of as many): lib/udp/udp.c, ARP_REPLY_RATE.
ARP_REPLY_RATE=20

# udpstat LOG KEY: a counter from the "udpstats" line unet-udp printed.
udpstat() {
	sed -n "s/^udpstats.* $2=\([0-9]*\).*/\1/p" "$1" | tail -1
}

# One round of udp_sizes: $1 = on|off, tx checksum offload of b (the
# kernel side).  With it on, b's kernel sends CHECKSUM_PARTIAL datagrams
# over veth; off, complete ones.
udp_sizes_round() {
	local off=$1 max=1472 pid
	in_b ethtool -K "$IF_B" tx "$off" >/dev/null 2>&1 || fail "ethtool -K $IF_B tx $off"
	in_a ethtool -K "$IF_A" tx "$off" >/dev/null 2>&1 || true
	# kernel client on b -> U-Net echo on a
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 100 \
		>"$T_DIR/uecho_$off.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho_$off.log" "$pid" >/dev/null
	grep -q "max_payload=$max" "$T_DIR/uecho_$off.log" || fail "U-Net UDP max payload is not $max"
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --max $max --timeout 90 \
		>"$T_DIR/ksizes_$off.log" 2>&1
	cat "$T_DIR/ksizes_$off.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/ksizes_$off.log" || fail "kernel client -> U-Net echo failed (tx $off)"
	stop "$pid" "$T_DIR/uecho_$off.log" "U-Net echo"
	grep -qx "echo echoed=$max" "$T_DIR/uecho_$off.log" || fail "U-Net echo did not echo exactly $max"
	local partial
	partial=$(udpstat "$T_DIR/uecho_$off.log" partial)
	note "tx $off: partial checksums accepted = $partial"
	if [[ $off == on ]]; then
		((partial > 0)) || fail "tx offload on, but no partial checksum was seen (the test would not notice breakage)"
	else
		((partial == 0)) || fail "tx offload off, yet $partial partial checksums"
	fi
	[[ $(udpstat "$T_DIR/uecho_$off.log" bad_udp_csum) == 0 ]] || fail "bad UDP checksums counted"
	# U-Net client on a -> kernel echo on b
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 100 >"$T_DIR/kecho_$off.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho_$off.log" "$pid" >/dev/null
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7101" --remote "$IP_B:7100" --max $max \
		--xdp-mode "$T_MODE" --timeout 90 >"$T_DIR/usizes_$off.log" 2>&1
	cat "$T_DIR/usizes_$off.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/usizes_$off.log" || fail "U-Net client -> kernel echo failed (tx $off)"
	stop "$pid" "$T_DIR/kecho_$off.log" "kernel echo"
	grep -qx "echo echoed=$max" "$T_DIR/kecho_$off.log" || fail "kernel echo did not echo exactly $max"
}

t_udp_sizes() {
	setup_ns
	attach a
	udp_sizes_round on
	udp_sizes_round off
	expect_stat a udp_delivered $((4 * 1472))
	local c
	for c in drop_udp_filter drop_ip_fragment drop_ip_malformed drop_no_socket; do
		expect_stat a "$c" 0
	done
	# Partial checksums refused on request: nothing gets through.
	in_b ethtool -K "$IF_B" tx on >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --partial reject --xdp-mode "$T_MODE" \
		--timeout 30 >"$T_DIR/reject.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/reject.log" "$pid" >/dev/null
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --max 3 --timeout 10 \
		>"$T_DIR/ksizes_rej.log" 2>&1 && fail "datagrams with partial checksums got through --partial reject"
	stop "$pid" "$T_DIR/reject.log" "U-Net echo (reject)"
	grep -qx "echo echoed=0" "$T_DIR/reject.log" || fail "reject: something was echoed"
	(($(udpstat "$T_DIR/reject.log" partial_refused) >= 3)) || fail "reject: partial_refused not counted"
}

t_udp_ports() {
	# a has 3 queues; b's kernel sends from tx queue 0 (CPU 0) or 2
	# (CPU 1) by XPS, arriving on a's queue 0, or 2 (native) / 1 (skb).
	# Endpoint 1 binds queue 0, endpoint 2 queues 1-2.
	setup_ns 3
	attach a
	local ncpu
	ncpu=$(nproc)
	((ncpu >= 2)) || skip "needs 2 CPUs to steer kernel UDP onto two queues (XPS)"
	in_b sh -c "echo 1 > /sys/class/net/$IF_B/queues/tx-0/xps_cpus; echo 0 > /sys/class/net/$IF_B/queues/tx-1/xps_cpus; echo 2 > /sys/class/net/$IF_B/queues/tx-2/xps_cpus" ||
		skip "cannot set XPS on $IF_B"
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --ports 4 --queue-mask 0x1 \
		--xdp-mode "$T_MODE" --timeout 100 >"$T_DIR/ep1.log" 2>&1
	local p1=$UNET_BG_PID
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7100" --ports 4 --queue-mask 0x6 \
		--xdp-mode "$T_MODE" --timeout 100 >"$T_DIR/ep2.log" 2>&1
	local p2=$UNET_BG_PID
	# and a kernel socket on the same host, another port
	unet_bg_a "$KUDP" echo --local "$IP_A:7200" --timeout 100 >"$T_DIR/kern_a.log" 2>&1
	local p3=$UNET_BG_PID
	local e1 e2
	e1=$(wait_ready "$T_DIR/ep1.log" "$p1") || exit 1
	e2=$(wait_ready "$T_DIR/ep2.log" "$p2") || exit 1
	wait_ready "$T_DIR/kern_a.log" "$p3" >/dev/null
	note "endpoints $e1 (ports 7000-7003) and $e2 (ports 7100-7103)"
	local list
	list=$(in_a "$UNETCTL" --json udp list "$IF_A") || fail "unetctl udp list failed"
	echo "$list"
	local port want
	for port in 7000 7001 7002 7003 7100 7101 7102 7103; do
		((port < 7100)) && want=$e1 || want=$e2
		[[ $(jq -r --argjson p $port '[.. | objects | select(has("port") and .port == $p)] | first | .endpoint' <<<"$list") == "$want" ]] ||
			fail "UDP port $port not owned by endpoint $want"
	done
	in_a "$UNETCTL" udp list "$IF_A" | grep -q "7103" || fail "text listing lacks port 7103"
	# Each port from a client pinned to the CPU whose XPS queue reaches
	# its endpoint; 50 datagrams of every size class.
	for port in 7000 7001 7002 7003; do
		in_b taskset -c 0 "$KUDP" sizes --local "$IP_B:$((port + 1000))" --remote "$IP_A:$port" --max 50 --timeout 20 \
			>"$T_DIR/c$port.log" 2>&1 || { cat "$T_DIR/c$port.log"; fail "port $port (endpoint $e1) did not echo"; }
	done
	for port in 7100 7101 7102 7103; do
		in_b taskset -c 1 "$KUDP" sizes --local "$IP_B:$((port + 1000))" --remote "$IP_A:$port" --max 50 --timeout 20 \
			>"$T_DIR/c$port.log" 2>&1 || { cat "$T_DIR/c$port.log"; fail "port $port (endpoint $e2) did not echo"; }
	done
	# A kernel socket on a still gets its port, ping still works.
	in_b "$KUDP" sizes --local "$IP_B:9000" --remote "$IP_A:7200" --max 50 --timeout 20 \
		>"$T_DIR/ck.log" 2>&1 || { cat "$T_DIR/ck.log"; fail "kernel socket on a lost its traffic"; }
	in_b ping -c 2 -W 1 -i 0.2 "$IP_A" >/dev/null || fail "ping to a failed with U-Net UDP ports"
	stop "$p1" "$T_DIR/ep1.log" "endpoint 1"
	stop "$p2" "$T_DIR/ep2.log" "endpoint 2"
	stop "$p3" "$T_DIR/kern_a.log" "kernel echo on a"
	grep -qx "echo echoed=200" "$T_DIR/ep1.log" || fail "endpoint 1 did not echo exactly 200"
	grep -qx "echo echoed=200" "$T_DIR/ep2.log" || fail "endpoint 2 did not echo exactly 200"
	grep -qx "echo echoed=50" "$T_DIR/kern_a.log" || fail "kernel echo on a did not echo exactly 50"
	expect_stat a udp_delivered 400
	expect_stat a drop_no_socket 0
	# Closed sockets leave the map; udp del of a missing port fails.
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "ports left in the map after their endpoints closed"
	in_a "$UNETCTL" udp del "$IF_A" "$IP_A:7000" 2>"$T_DIR/del.err" && fail "udp del of a missing port succeeded"
	grep -q "^unetctl: " "$T_DIR/del.err" || fail "udp del error is not one unetctl: line"
}

t_udp_arp() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	local uaddr=10.201.0.3
	in_b ip neigh flush dev "$IF_B"
	# U-Net-owned address (a's kernel does not have it): the endpoint
	# answers b's ARP, b's kernel client reaches it.
	unet_bg_a "$UUDP" echo "$IF_A" --local "$uaddr:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/own.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/own.log" "$pid" >/dev/null
	in_a "$UNETCTL" --json udp list "$IF_A" | jq -e '[.. | objects | select(has("port"))] | first | .arp == true' >/dev/null ||
		fail "U-Net-owned address not listed as answering ARP"
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$uaddr:7000" --max 20 --timeout 20 \
		>"$T_DIR/c1.log" 2>&1 || { cat "$T_DIR/c1.log"; fail "kernel client could not reach the U-Net-owned address"; }
	in_b ip neigh show "$uaddr" dev "$IF_B" | grep -qi "lladdr $MAC_A" || fail "b did not learn $uaddr -> $MAC_A from the endpoint's ARP reply"
	stop "$pid" "$T_DIR/own.log" "U-Net echo"
	(($(udpstat "$T_DIR/own.log" arp_rep) >= 1)) || fail "the endpoint sent no ARP reply"
	expect_stat a arp_delivered "$(counter a arp_delivered)"
	(($(counter a arp_delivered) >= 1)) || fail "arp_delivered did not move"
	# A U-Net client resolving b from the U-Net-owned address with an
	# ARP TTL of 300 ms, 5 datagrams 400 ms apart: every one finds its
	# entry expired and resolves again (>= 5 requests).
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 60 >"$T_DIR/kecho.log" 2>&1
	local kp=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$kp" >/dev/null
	sleep 0.4
	in_a "$UUDP" sizes "$IF_A" --local "$uaddr:7101" --remote "$IP_B:7100" --max 5 --arp-ttl-ms 300 \
		--gap-ms 400 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u1.log" 2>&1 || { cat "$T_DIR/u1.log"; fail "U-Net client from the U-Net address failed"; }
	cat "$T_DIR/u1.log"
	(($(udpstat "$T_DIR/u1.log" arp_req) >= 5)) || fail "expired ARP entries were not resolved again (want >= 5 requests)"
	# With the default TTL the same exchange needs at most one.
	in_a "$UUDP" sizes "$IF_A" --local "$uaddr:7101" --remote "$IP_B:7100" --max 5 \
		--gap-ms 100 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u1b.log" 2>&1 || { cat "$T_DIR/u1b.log"; fail "U-Net client (default TTL) failed"; }
	(($(udpstat "$T_DIR/u1b.log" arp_req) <= 1)) || fail "a fresh ARP entry was resolved again"
	# Kernel-owned address: a's kernel answers ARP (nothing to the
	# endpoint), the endpoint still learns b's MAC from the reply.
	local before
	before=$(counter a arp_delivered)
	in_b ip neigh flush dev "$IF_B"
	in_a ip neigh flush dev "$IF_A"
	sleep 0.4 # older than the TTL below: what the map learnt before does not count
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7102" --remote "$IP_B:7100" --max 5 --arp-ttl-ms 300 \
		--xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u2.log" 2>&1 || { cat "$T_DIR/u2.log"; fail "U-Net client from the kernel's address failed"; }
	cat "$T_DIR/u2.log"
	(($(udpstat "$T_DIR/u2.log" arp_req) >= 1)) || fail "no ARP request from the kernel-owned address"
	[[ $(udpstat "$T_DIR/u2.log" arp_rx) == 0 ]] || fail "ARP for the kernel's address reached the endpoint"
	expect_stat a arp_delivered "$before"
	in_b ping -c 1 -W 1 "$IP_A" >/dev/null || fail "a's kernel no longer answers ARP/ping"
	stop "$kp" "$T_DIR/kecho.log" "kernel echo"
}

t_udp_bad() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$pid" >/dev/null
	local inj=("$KUDP" inject "$IF_B" --dst-mac "$MAC_A" --local "$IP_B:7001" --remote "$IP_A:7000")
	in_b "${inj[@]}" --kind bad-ip-csum --count 5 || fail "inject failed"
	in_b "${inj[@]}" --kind bad-udp-csum --count 6 || fail "inject failed"
	in_b "${inj[@]}" --kind truncated --len 100 --count 7 || fail "inject failed"
	in_b "${inj[@]}" --kind short-udp --count 3 || fail "inject failed"
	in_b "${inj[@]}" --kind frag-first --len 200 --count 4 || fail "inject failed"
	in_b "${inj[@]}" --kind frag-rest --len 200 --count 2 || fail "inject failed"
	in_b "${inj[@]}" --kind good --count 1 || fail "inject failed"
	# IP options are skipped and the datagram delivered (RFC 1122 3.2.1.8)
	in_b "${inj[@]}" --kind ip-options --len 40 --count 2 || fail "inject failed"
	# A datagram past max_payload (1476 bytes: a 1518-byte frame, which
	# veth takes at MTU 1500; the hostile side raises its own MTU to send
	# it) is refused by the library, counted malformed.
	in_b ip link set "$IF_B" mtu 1504 || fail "b's MTU"
	in_b "${inj[@]}" --kind good --len 1476 --count 2 || fail "inject failed"
	in_b ip link set "$IF_B" mtu 1500 || fail "b's MTU"
	expect_stat a drop_ip_malformed 10
	expect_stat a drop_ip_fragment 4
	# checksums and sizes are the library's job: 5 + 6 + 1 + 2 + 2 reach
	# the endpoint
	expect_stat a udp_delivered 16
	sleep 0.3
	stop "$pid" "$T_DIR/echo.log" "U-Net echo"
	grep -qx "echo echoed=3" "$T_DIR/echo.log" ||
		fail "not exactly the good datagram and the 2 with IP options were echoed"
	[[ $(udpstat "$T_DIR/echo.log" bad_ip_csum) == 5 ]] || fail "bad IP checksums not counted 5"
	[[ $(udpstat "$T_DIR/echo.log" bad_udp_csum) == 6 ]] || fail "bad UDP checksums not counted 6"
	[[ $(udpstat "$T_DIR/echo.log" rx) == 3 ]] || fail "not exactly 3 datagrams reached the application"
	[[ $(udpstat "$T_DIR/echo.log" malformed) == 2 ]] || fail "the datagrams past max_payload not counted malformed"
	# A connected socket: only b:7777 may talk to it.
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7500" --remote "$IP_B:7777" \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/conn.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/conn.log" "$pid" >/dev/null
	in_b "$KUDP" inject "$IF_B" --dst-mac "$MAC_A" --local "$IP_B:7001" --remote "$IP_A:7500" --kind good --count 8 ||
		fail "inject failed"
	in_b "$KUDP" inject "$IF_B" --dst-mac "$MAC_A" --local "$IP_B:7777" --remote "$IP_A:7500" --kind good --count 1 ||
		fail "inject failed"
	expect_stat a drop_udp_filter 8
	expect_stat a udp_delivered 17
	sleep 0.3
	stop "$pid" "$T_DIR/conn.log" "connected socket"
	grep -qx "echo echoed=1" "$T_DIR/conn.log" || fail "the connected socket did not hear exactly its peer once"
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "ports left after close"
}

t_udp_sigkill() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$pid" >/dev/null
	kill -KILL "$pid"
	unet_bg_wait "$pid" 5
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq -r '[.. | objects | select(has("port"))] | first | .stale') == true ]] ||
		fail "the dead owner's port is not listed stale"
	local r
	r=$(in_a "$UNETCTL" --json reclaim "$IF_A" | jq -r '.removed') || fail "reclaim failed"
	((r >= 2)) || fail "reclaim removed $r entries, want >= 2 (endpoint + port)"
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "the port survived reclaim"
	# The kernel has the port back.
	unet_bg_a "$KUDP" echo --local "$IP_A:7000" --timeout 30 >"$T_DIR/k.log" 2>&1
	local kp=$UNET_BG_PID
	wait_ready "$T_DIR/k.log" "$kp" >/dev/null
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --max 10 --timeout 10 \
		>"$T_DIR/c.log" 2>&1 || { cat "$T_DIR/c.log"; fail "the kernel did not get the port back"; }
	stop "$kp" "$T_DIR/k.log" "kernel echo"
	# A new endpoint can take a port a dead owner held (without reclaim).
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7001" --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/e2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/e2.log" "$pid" >/dev/null
	kill -KILL "$pid"
	unet_bg_wait "$pid" 5
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7001" --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/e3.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/e3.log" "$pid" >/dev/null
	stop "$pid" "$T_DIR/e3.log" "second owner"
}

t_udp_arp_storm() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	local uaddr=10.201.0.3 t0 t1 storm=5000
	t0=$(date +%s)
	unet_bg_a "$UUDP" echo "$IF_A" --local "$uaddr:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$pid" >/dev/null
	# b resolves the address before the storm (its kernel keeps the entry
	# for the test's few seconds), then a client runs through the storm.
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$uaddr:7000" --max 5 --timeout 20 \
		>"$T_DIR/c0.log" 2>&1 || { cat "$T_DIR/c0.log"; fail "kernel client could not reach the U-Net-owned address"; }
	unet_bg_b "$KUDP" sizes --local "$IP_B:7002" --remote "$uaddr:7000" --max 200 --timeout 40 \
		>"$T_DIR/c1.log" 2>&1
	local cp=$UNET_BG_PID
	in_b "$KUDP" inject "$IF_B" --dst-mac ff:ff:ff:ff:ff:ff --local "$IP_B" --remote "$uaddr" \
		--kind arp-request --count $storm --interval-us 100 || fail "ARP storm inject failed"
	finish "$cp" "$T_DIR/c1.log" 40 "kernel client during the storm"
	grep -qx "sizes ok 1..200" "$T_DIR/c1.log" || fail "the kernel client's datagrams were not all echoed during the storm"
	stop "$pid" "$T_DIR/echo.log" "U-Net echo"
	t1=$(date +%s)
	local echoed
	echoed=$(sed -n 's/^echo echoed=//p' "$T_DIR/echo.log")
	((echoed >= 205)) || fail "the echo echoed $echoed datagrams, want >= 205"
	local rep rx lim bound
	rep=$(udpstat "$T_DIR/echo.log" arp_rep)
	rx=$(udpstat "$T_DIR/echo.log" arp_rx)
	lim=$(udpstat "$T_DIR/echo.log" arp_rep_limited)
	# The limiter's bound over the echo's whole life (whole seconds, one
	# more for rounding), plus its burst.
	bound=$((ARP_REPLY_RATE * (t1 - t0 + 2)))
	note "storm of $storm: arp_rx=$rx arp_rep=$rep arp_rep_limited=$lim (bound $bound over $((t1 - t0)) s)"
	((rx >= storm / 2)) || fail "only $rx of $storm ARP requests reached the endpoint (the test would not notice breakage)"
	((rep <= bound)) || fail "the endpoint sent $rep ARP replies to a storm of $storm requests (rate limit bound $bound)"
	((rep >= 1)) || fail "no ARP reply at all"
	((lim + rep >= rx - 5)) || fail "replies ($rep) and limited ($lim) do not account for the $rx requests"
}

t_udp_arp_poison() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	local uaddr=10.201.0.3 evil=02:de:ad:be:ef:01
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 60 >"$T_DIR/kecho.log" 2>&1
	local kp=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$kp" >/dev/null
	# A U-Net client on the U-Net-owned address (so ARP for it reaches the
	# endpoint) sends to b for about 3 s; once it has resolved b, b's side
	# tries to make it send elsewhere.
	unet_bg_a "$UUDP" sizes "$IF_A" --local "$uaddr:7101" --remote "$IP_B:7100" --max 60 --gap-ms 50 \
		--xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/u.log" 2>&1
	local up=$UNET_BG_PID
	wait_ready "$T_DIR/u.log" "$up" >/dev/null
	sleep 0.5
	local inj=("$KUDP" inject "$IF_B" --local "$IP_B" --remote "$uaddr" --count 10 --interval-us 20000)
	# sha that is not the Ethernet source (a forged sender), reply and request
	in_b "${inj[@]}" --dst-mac "$MAC_A" --kind arp-reply --sha "$evil" || fail "inject failed"
	in_b "${inj[@]}" --dst-mac ff:ff:ff:ff:ff:ff --kind arp-request --sha "$evil" || fail "inject failed"
	# consistent sha and Ethernet source, but an answer nobody asked for,
	# and a request that would overwrite the fresh entry
	in_b "${inj[@]}" --dst-mac "$MAC_A" --kind arp-reply --sha "$evil" --src-mac "$evil" || fail "inject failed"
	in_b "${inj[@]}" --dst-mac ff:ff:ff:ff:ff:ff --kind arp-request --sha "$evil" --src-mac "$evil" ||
		fail "inject failed"
	finish "$up" "$T_DIR/u.log" 30 "U-Net client"
	grep -qx "sizes ok 1..60" "$T_DIR/u.log" || fail "poisoned: the U-Net client's datagrams stopped reaching b"
	stop "$kp" "$T_DIR/kecho.log" "kernel echo"
	grep -qx "echo echoed=60" "$T_DIR/kecho.log" || fail "b did not echo exactly 60 datagrams"
	local rej ign
	rej=$(udpstat "$T_DIR/u.log" arp_rejected)
	ign=$(udpstat "$T_DIR/u.log" arp_ignored)
	note "arp_rejected=$rej arp_ignored=$ign"
	((rej >= 20)) || fail "the 20 forged-sha frames were not counted arp_rejected ($rej)"
	((ign >= 20)) || fail "the 20 unsolicited/overwriting frames were not counted arp_ignored ($ign)"
}

t_udp_unreach() {
	setup_ns
	attach a
	local n=300
	in_a "$UUDP" unreach "$IF_A" --local "$IP_A:7300" --remote 10.201.0.99:7000 --count $n --gap-ms 10 \
		--xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u.log" 2>&1 || { cat "$T_DIR/u.log"; fail "unet-udp unreach failed"; }
	cat "$T_DIR/u.log"
	local line req
	line=$(grep '^unreach ' "$T_DIR/u.log") || fail "no result line"
	[[ $line =~ sends=([0-9]+)\ ok=([0-9]+)\ eagain=([0-9]+)\ ehostunreach=([0-9]+)\ other=([0-9]+) ]] ||
		fail "bad result line: $line"
	((BASH_REMATCH[1] == n)) || fail "only ${BASH_REMATCH[1]} of $n sends returned before the 20 s timeout (sends block on ARP)"
	((BASH_REMATCH[2] == 0 && BASH_REMATCH[5] == 0)) || fail "sends to nobody succeeded or failed otherwise: $line"
	((BASH_REMATCH[3] >= 1)) || fail "no -EAGAIN while the first resolution was under way"
	((BASH_REMATCH[4] >= n / 4)) || fail "too few -EHOSTUNREACH (negative cache): $line"
	req=$(udpstat "$T_DIR/u.log" arp_req)
	# 300 sends over about 3 s: at most one resolution (<= 6 requests, one
	# each 200 ms for 1 s) per 2 s (1 s asking, 1 s remembered unreachable).
	((req >= 1 && req <= 30)) || fail "$req ARP requests for $n sends (want 1..30)"
	(($(udpstat "$T_DIR/u.log" arp_failed) >= 1)) || fail "arp_failed not counted"
}
