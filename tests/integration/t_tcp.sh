# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_tcp.sh - TCP/IPv4 over U-Net (docs/tcp.md, lwIP) against the kernel's
# TCP.  Sourced by run.sh (see lib.sh for the helpers).  U-Net is side a
# (10.201.0.1, the kernel's own address there), the kernel peer side b.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"tcp_iperf|xdp|120|iperf3 -c against a U-Net server and a U-Net client against iperf3 -s: 256 MiB each way, byte counts checked on both sides"
	"tcp_sizes|xdp|90|kernel client -> U-Net echo and U-Net client -> kernel echo: every write size 1..2048, then every 997th to 65536, byte for byte; examples/tcp_echo both ways"
	"tcp_loss|xdp|150|the XDP fault hook drops 1% of the TCP segments reaching U-Net: a 64 MiB kernel -> U-Net transfer completes and verifies"
	"tcp_loss5|xdp|150|the XDP fault hook drops 5% of the TCP segments reaching U-Net: a 64 MiB kernel -> U-Net transfer completes and verifies (the kernel peer's RTO bounded to 5 ms .. 1 s, as a datacenter sets it)"
	"tcp_conns|xdp|90|256 concurrent U-Net connections on one endpoint to a kernel echo, each stream verified; unetctl tcp list shows their ports"
	"tcp_teardown|xdp|90|FIN both ways, RST both ways, kernel peer killed mid-transfer: the U-Net server keeps serving; U-Net process SIGKILLed: the kernel peer sees a reset, the port goes stale, the next run is clean, the kernel can bind the port again"
	"tcp_batch|xdp|60|batched sending: after the window opened, one 64 KiB send (more segments than one kick sends) reaches the kernel peer whole and in order while the U-Net side makes no further call"
	"tcp_fuzz|xdp|150|200 000 seeded mutated segments of a live U-Net connection straight into the TCP layer's input (bad checksums, out-of-window and old data, odd flags and options, lengths that do not add up): verdicts and counters as documented, no byte reaches the application, 64 KiB each way afterwards (test_tcp_fuzz)"
	"tcp_isn|xdp|120|initial sequence numbers: two connections to each of two fresh U-Net servers get four different ISNs, none near lwIP's 6510; a blind RST sweep (the kernel client's whole ephemeral port range x 16 sequence numbers from lwIP's) does not reset a live connection"
	"tcp_synflood|xdp|90|a SYN flood from spoofed sources at the listening port, as fast as one process sends (AF_PACKET, until the clients are through, 8 s at most): 20 real kernel clients and 20 by hand with a 5 ms round trip connect and echo during it, one after another"
	"tcp_tiny|xdp|90|20 000 in-order and 20 000 out-of-order 1-byte segments into two connections of a U-Net server that does not read: the memory it holds for them stays under 256 KiB (mallinfo2)"
	"tcp_threads|xdp|90|two TCP endpoints in one process on two threads, each on its own interface with its own connection to a kernel echo: 3 s of traffic both at once, every byte echoed in order"
	"tcp_threads_tsan|-|240|the same under ThreadSanitizer (make tsan, build-tsan/): no data race reported, every byte echoed"
	"tcp_hostile|xdp|120|bad TCP checksums, bad IP/TCP lengths, out-of-window data on a live connection, 10 000 spoofed SYNs at the listening port: no byte reaches the application, valid connections keep working"
)
# The 5% round at the kernel's default RTO bounds (200 ms .. 120 s): slow,
# and now and then a chain of backed-off RTOs long enough to stall the
# sender for a minute (docs/tcp.md, "5% loss and the kernel's RTO"), so
# `make soak`, not make check.
if [[ ${UNET_SOAK:-0} == 1 ]]; then
	TESTS+=("tcp_loss5_default|xdp|150|5% loss at the kernel peer's default RTO bounds: an 8 MiB kernel -> U-Net transfer completes and verifies; the sender's TCP_INFO (backoff, reordering) is printed")
fi

# tcp_setup: namespaces, the program on a.  The kernel peer on b keeps
# veth's default offloads, as in every container: its segments carry
# partial checksums (the pseudo-header sum only), which the TCP layer
# accepts on veth (docs/tcp.md, "Checksums").  tcp_sizes also runs a
# round with complete checksums (tx off).  In skb mode only, b's
# segmentation offload goes off (checksums stay partial): generic XDP
# hands the endpoint b's GSO super-segments whole, and the kernel drops
# those longer than a U-Net frame before U-Net sees them (native XDP on
# veth turns GSO off on the peer itself).  tcp_sizes runs a round with
# GSO on in skb mode, sizes that still fit a frame.
tcp_setup() {
	UTCP=$BUILD/tools/unet-tcp
	TPEER=$ROOT/tests/tools/tcp-peer.py
	THOSTILE=$ROOT/tests/tools/tcp-hostile.py
	[[ -x $UTCP ]] || fail "$UTCP not built"
	setup_ns
	attach a
	tcp_gso off
}

# tcp_gso on|off: b's segmentation offload, in skb mode (see tcp_setup).
tcp_gso() {
	[[ $T_MODE == skb ]] || return 0
	in_b ethtool -K "$IF_B" tso "$1" gso "$1" >/dev/null 2>&1 || fail "ethtool -K $IF_B tso $1 gso $1"
}

# tcpstat LOG KEY: a counter from the tool's "tcpstats" line.
tcpstat() {
	sed -n "s/^tcpstats.* $2=\([0-9]*\).*/\1/p" "$1" | tail -1
}

# Bulk size: 256 MiB, under ASan/UBSan too (about 6 s each way there:
# the kernel peer and veth dominate).
tcp_bulk() {
	echo $((256 << 20))
}

t_tcp_iperf() {
	command -v iperf3 >/dev/null || skip "iperf3 not installed (scripts/install-deps.sh)"
	tcp_setup
	local n req pid sent
	n=$(tcp_bulk)
	note "iperf3 -c (kernel, b) -> U-Net iperf server (a), at least $n bytes"
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 100 \
		iperf-server --port 5201 >"$T_DIR/userver.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/userver.log" "$pid" >/dev/null
	# -n N is "at least N": iperf3 counts whole blocks (-l 128 KiB here)
	# and checks the count between them, now and then one block late.
	# Asked for half a block past n, it always sends more than it was
	# asked, so the U-Net server must read past -n to what the client
	# says it sent, which it must have received exactly.
	req=$((n + 65536))
	in_b timeout 100 iperf3 -c "$IP_A" -p 5201 -n "$req" -l 131072 -J >"$T_DIR/iperf-c.json" 2>&1 ||
		{ cat "$T_DIR/iperf-c.json"; fail "iperf3 -c against the U-Net server failed"; }
	finish "$pid" "$T_DIR/userver.log" 20 "U-Net iperf server"
	sent=$(jq -r '.end.sum_sent.bytes' "$T_DIR/iperf-c.json")
	if ! [[ $sent =~ ^[0-9]+$ ]] || ((sent < req || sent > req + 131072)); then
		fail "iperf3 -c says it sent $sent, want $req to $((req + 131072))"
	fi
	grep -qx "iperf-server bytes=$sent num=$req sent=$sent" "$T_DIR/userver.log" ||
		fail "the U-Net server did not receive exactly the $sent bytes iperf3 sent"
	note "iperf3 -c: $(jq -r '.end.sum_received.bits_per_second / 8e6 | floor' "$T_DIR/iperf-c.json") MB/s"

	note "U-Net iperf client (a) -> iperf3 -s (kernel, b), $n bytes"
	unet_bg_b timeout 100 iperf3 -s -1 -B "$IP_B" -p 5202 -J >"$T_DIR/iperf-s.json" 2>&1
	pid=$UNET_BG_PID
	local i
	for ((i = 0; i < 50; i++)); do
		in_b ss -ltn | grep -q ":5202 " && break
		sleep 0.1
	done
	in_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 100 \
		iperf-client --remote "$IP_B:5202" --bytes "$n" >"$T_DIR/uclient.log" 2>&1 ||
		{ cat "$T_DIR/uclient.log"; fail "the U-Net iperf client failed"; }
	cat "$T_DIR/uclient.log"
	unet_bg_wait "$pid" 20 || { cat "$T_DIR/iperf-s.json"; fail "iperf3 -s failed"; }
	[[ $(jq -r '.end.sum_received.bytes' "$T_DIR/iperf-s.json") == "$n" ]] ||
		fail "iperf3 -s says it received $(jq -r '.end.sum_received.bytes' "$T_DIR/iperf-s.json"), want $n"
}

# kernel_sizes_round PORT NAME MAX WHAT: a U-Net echo in a on PORT, the
# kernel's sizes 1..MAX from b through it, byte for byte; the echo's log
# is $T_DIR/uecho_NAME.log.
kernel_sizes_round() {
	local pid
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		echo --port "$1" --conns 1 >"$T_DIR/uecho_$2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho_$2.log" "$pid" >/dev/null
	in_b timeout 60 python3 "$TPEER" sizes "$IP_A:$1" --max "$3" >"$T_DIR/ksizes_$2.log" 2>&1 ||
		{ cat "$T_DIR/ksizes_$2.log"; fail "kernel sizes ($4) against the U-Net echo failed"; }
	finish "$pid" "$T_DIR/uecho_$2.log" 10 "U-Net echo ($4)"
}

t_tcp_sizes() {
	tcp_setup
	local pid
	note "kernel client (b) -> U-Net echo (a)"
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		echo --port 5000 --conns 1 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	in_b timeout 60 python3 "$TPEER" sizes "$IP_A:5000" >"$T_DIR/ksizes.log" 2>&1 ||
		{ cat "$T_DIR/ksizes.log"; fail "kernel sizes against the U-Net echo failed"; }
	cat "$T_DIR/ksizes.log"
	grep -q "^sizes ok 2112 sizes 1..65536" "$T_DIR/ksizes.log" || fail "not every size was checked"
	finish "$pid" "$T_DIR/uecho.log" 10 "U-Net echo"
	grep -q "^echo conns=1 bytes=4302688 errors=0" "$T_DIR/uecho.log" ||
		fail "the U-Net echo did not echo exactly the stream"
	local partial
	partial=$(tcpstat "$T_DIR/uecho.log" rx_partial_csum)
	note "kernel peer with its default offloads: partial checksums accepted = $partial"
	((partial > 0)) || fail "no partial checksum seen with tx offload on (the test would not notice breakage)"
	[[ $(tcpstat "$T_DIR/uecho.log" rx_bad_csum) == 0 ]] || fail "bad checksums counted"

	if [[ $T_MODE == skb ]]; then
		note "skb mode, the kernel's GSO on: super-segments that fit a frame are cut by the layer"
		tcp_gso on
		kernel_sizes_round 5003 gso 1700 "GSO on"
		(($(tcpstat "$T_DIR/uecho_gso.log" rx_gso) > 0)) || fail "GSO on, but no super-segment was cut"
		tcp_gso off
	fi

	note "the same with complete checksums (ethtool -K tx off on the kernel's side)"
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1 || fail "ethtool -K $IF_B tx off"
	kernel_sizes_round 5001 full 4096 "tx off"
	partial=$(tcpstat "$T_DIR/uecho_full.log" rx_partial_csum)
	((partial == 0)) || fail "tx offload off, yet $partial partial checksums"
	in_b ethtool -K "$IF_B" tx on >/dev/null 2>&1 || fail "ethtool -K $IF_B tx on"

	note "--partial reject: the kernel's SYNs are refused, and counted"
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 20 \
		echo --port 5002 --partial reject >"$T_DIR/uecho_rej.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho_rej.log" "$pid" >/dev/null
	in_b timeout 10 python3 -c "
import socket
try:
    socket.create_connection(('$IP_A', 5002), timeout=3)
    print('connected')
except OSError as e:
    print('refused', e)" >"$T_DIR/krej.log" 2>&1
	stop "$pid" "$T_DIR/uecho_rej.log" "U-Net echo (reject)"
	grep -q "^refused" "$T_DIR/krej.log" || fail "a kernel client with partial checksums connected through --partial reject"
	(($(tcpstat "$T_DIR/uecho_rej.log" rx_partial_refused) >= 2)) ||
		fail "--partial reject: the SYNs were not counted rx_partial_refused"

	note "U-Net client (a) -> kernel echo (b)"
	unet_bg_b python3 "$TPEER" echo "$IP_B:6000" --conns 1 >"$T_DIR/kecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	in_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		sizes --remote "$IP_B:6000" >"$T_DIR/usizes.log" 2>&1 ||
		{ cat "$T_DIR/usizes.log"; fail "U-Net sizes against the kernel echo failed"; }
	cat "$T_DIR/usizes.log"
	grep -q "^sizes ok 2112 sizes 1..65536" "$T_DIR/usizes.log" || fail "not every size was checked"
	finish "$pid" "$T_DIR/kecho.log" 10 "kernel echo"

	note "examples/tcp_echo: server for a kernel client, client of a kernel server"
	unet_bg_a "$BUILD/examples/tcp_echo" server "$IF_A" "$IP_A" 5100 >"$T_DIR/ex.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/ex.log" "$pid" >/dev/null
	local out
	out=$(in_b timeout 10 python3 -c "
import socket
s = socket.create_connection(('$IP_A', 5100), timeout=5)
s.sendall(b'hello over U-Net')
print(s.recv(100).decode())") || fail "kernel client of examples/tcp_echo failed"
	[[ $out == "hello over U-Net" ]] || fail "tcp_echo server echoed '$out'"
	kill -TERM "$pid"
	unet_bg_wait "$pid" 5
	unet_bg_b python3 "$TPEER" echo "$IP_B:6100" --conns 1 >"$T_DIR/kecho2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho2.log" "$pid" >/dev/null
	out=$(in_a timeout 10 "$BUILD/examples/tcp_echo" client "$IF_A" "$IP_A" "$IP_B" 6100 "hi from U-Net") ||
		fail "examples/tcp_echo client failed: $out"
	[[ $out == "echo: hi from U-Net" ]] || fail "tcp_echo client printed '$out'"
	finish "$pid" "$T_DIR/kecho2.log" 10 "kernel echo"
}

# tcp_loss_round PPM BYTES: kernel source (b) -> U-Net sink (a) with the
# fault hook dropping PPM per million of the segments reaching U-Net.
tcp_loss_round() {
	local ppm=$1 n=$2 pid t0 t1 inj0 inj1
	in_a "$UNETCTL" fault "$IF_A" --drop-ppm "$ppm" >/dev/null || fail "unetctl fault --drop-ppm $ppm"
	inj0=$(counter a drop_injected)
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 120 \
		sink --port 5300 --conns 1 >"$T_DIR/sink_$ppm.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/sink_$ppm.log" "$pid" >/dev/null
	t0=$(date +%s%N)
	in_b timeout 120 python3 "$TPEER" source "$IP_A:5300" --bytes "$n" >"$T_DIR/src_$ppm.log" 2>&1 ||
		{ cat "$T_DIR/src_$ppm.log"; fail "transfer with $ppm ppm loss failed"; }
	t1=$(date +%s%N)
	finish "$pid" "$T_DIR/sink_$ppm.log" 10 "U-Net sink"
	inj1=$(counter a drop_injected)
	note "loss $ppm ppm: $n bytes in $(((t1 - t0) / 1000000)) ms, $((inj1 - inj0)) segments dropped by the hook"
	note "kernel sender: $(sed -n 's/^source ok .*tcp_info: //p' "$T_DIR/src_$ppm.log")"
	((inj1 - inj0 > 0)) || fail "the fault hook dropped no TCP segment (the test would not notice)"
	grep -q "^sink conns=1 bytes=$n errors=0" "$T_DIR/sink_$ppm.log" || fail "the sink did not get $n bytes"
	in_a "$UNETCTL" fault "$IF_A" --drop-ppm 0 >/dev/null
}

t_tcp_loss() {
	tcp_setup
	local n=$((64 << 20))
	[[ ${UNET_SANITIZED:-0} == 1 ]] && n=$((16 << 20))
	tcp_loss_round 10000 "$n"
}

# 5%: lwIP 2.1.3 offers neither SACK nor timestamps, so the kernel
# sender recovers from most losses by retransmission timeout, and a
# retransmission lost during that recovery costs another timeout, twice
# as long, with nothing to reset the backoff (docs/tcp.md, "5% loss and
# the kernel's RTO").  The peer's RTO is bounded the way a datacenter
# bounds it: the route's rto_min 5 ms (default 200 ms) and, where the
# kernel has it (Linux >= 6.15), net.ipv4.tcp_rto_max_ms 1000 (default
# 120 s), so that a chain of backed-off timeouts costs seconds, not
# minutes.  Only the kernel peer's settings change: U-Net is as always.
t_tcp_loss5() {
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (tcp_loss runs the same recovery under the sanitizers, at 1%)"
	tcp_setup
	in_b ip route change "${IP_B%.*}.0/24" dev "$IF_B" proto kernel scope link src "$IP_B" rto_min 5ms ||
		fail "ip route change ... rto_min 5ms"
	if in_b sysctl -qw net.ipv4.tcp_rto_max_ms=1000 2>/dev/null; then
		note "kernel peer: route rto_min 5ms, tcp_rto_max_ms 1000"
	else
		note "kernel peer: route rto_min 5ms (no net.ipv4.tcp_rto_max_ms on this kernel: RTO cap stays 120 s)"
	fi
	tcp_loss_round 50000 $((64 << 20))
}

# The same at the kernel's default RTO bounds (make soak): about
# 0.2-2 MB/s, now and then a minute-long stall.
t_tcp_loss5_default() {
	tcp_setup
	tcp_loss_round 50000 $((8 << 20))
}

t_tcp_conns() {
	tcp_setup
	local pid n=256
	unet_bg_b python3 "$TPEER" echo "$IP_B:6200" --conns $n >"$T_DIR/kecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$pid" >/dev/null
	in_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		conns --remote "$IP_B:6200" --count $n --bytes 20000 >"$T_DIR/uconns.log" 2>&1 ||
		{ cat "$T_DIR/uconns.log"; fail "256 concurrent connections failed"; }
	cat "$T_DIR/uconns.log"
	grep -q "^conns ok=$n of $n" "$T_DIR/uconns.log" || fail "not all $n connections verified"
	finish "$pid" "$T_DIR/kecho.log" 20 "kernel echo"
	# Their ports were U-Net's while open and are given back after.
	[[ $(in_a "$UNETCTL" --json tcp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "connection ports left in unet_tcp_ports after the run"
}

t_tcp_teardown() {
	tcp_setup
	local pid cpid out
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 80 \
		echo --port 5400 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	[[ $(in_a "$UNETCTL" --json tcp list "$IF_A" | jq -r '[.. | objects | select(has("port"))] | first | .kind') == listen ]] ||
		fail "unetctl tcp list does not show the listening port"
	# The port is held against the kernel: not even a server's socket
	# (SO_REUSEADDR) can bind it.
	in_a python3 -c "
import socket, sys
for reuse in (0, 1):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, reuse)
    try:
        s.bind(('$IP_A', 5400))
    except OSError:
        continue
    sys.exit('a kernel socket (SO_REUSEADDR %d) could bind the U-Net port' % reuse)" ||
		fail "the kernel could take the U-Net port"

	note "FIN from the kernel, FIN back; RST from the kernel (SO_LINGER 0)"
	out=$(in_b timeout 20 python3 -c "
import socket, struct
s = socket.create_connection(('$IP_A', 5400), timeout=5)
s.sendall(b'x' * 1000)
got = b''
while len(got) < 1000:
    got += s.recv(1000)
s.shutdown(socket.SHUT_WR)
print('eof' if s.recv(10) == b'' else 'no-eof')
s.close()
r = socket.create_connection(('$IP_A', 5400), timeout=5)
r.sendall(b'y' * 100)
r.recv(100)
r.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
r.close()
print('rst sent')") || fail "FIN/RST client failed: $out"
	[[ $out == *eof*"rst sent"* && $out != *no-eof* ]] || fail "FIN exchange: $out"

	note "RST from U-Net (unet_tcp__abort): the kernel peer sees a reset"
	unet_bg_b python3 -c "
import socket
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('$IP_B', 6500))
l.listen()
print('ready port=6500', flush=True)
c, _ = l.accept()
c.settimeout(10)
got = 0
try:
    while got < 100:
        d = c.recv(100)
        if not d:
            print('eof', flush=True)
            raise SystemExit
        got += len(d)
    c.recv(100)
    print('no reset', flush=True)
except ConnectionResetError:
    print('reset', flush=True)
" >"$T_DIR/kabort.log" 2>&1
	cpid=$UNET_BG_PID
	wait_ready "$T_DIR/kabort.log" "$cpid" >/dev/null
	# the echo server holds queue 0 of a: a second endpoint cannot bind it
	# in skb mode everywhere, so the abort runs after the echo tests below
	KABORT_PID=$cpid

	note "kernel peer killed mid-transfer"
	unet_bg_b python3 "$TPEER" source "$IP_A:5400" --bytes $((512 << 20)) >"$T_DIR/ksrc.log" 2>&1
	cpid=$UNET_BG_PID
	sleep 0.5
	kill -KILL "$cpid"
	unet_bg_wait "$cpid" 5
	note "the U-Net server keeps serving"
	in_b timeout 30 python3 "$TPEER" sizes "$IP_A:5400" --max 4096 >"$T_DIR/after.log" 2>&1 ||
		{ cat "$T_DIR/after.log"; fail "the U-Net server stopped serving after resets"; }
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"

	in_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 20 \
		abort --remote "$IP_B:6500" >"$T_DIR/abort.log" 2>&1 ||
		{ cat "$T_DIR/abort.log"; fail "the U-Net abort client failed"; }
	unet_bg_wait "$KABORT_PID" 15 || true
	cat "$T_DIR/kabort.log"
	grep -qx reset "$T_DIR/kabort.log" || fail "unet_tcp__abort: the kernel peer saw no reset"

	note "the U-Net process is SIGKILLed mid-connection: the kernel peer sees a reset"
	# The kernel side reads the client's 1 MiB, then writes until the
	# connection fails: after the kill its segments reach the kernel of a
	# (no U-Net owner with a socket, no kernel socket), which resets.
	unet_bg_b python3 -c "
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('$IP_B', 6400))
l.listen()
print('ready port=6400', flush=True)
c, _ = l.accept()
c.settimeout(20)
got = 0
try:
    while got < 1 << 20:
        d = c.recv(65536)
        if not d:
            sys.exit('eof')
        got += len(d)
    print('got', got, flush=True)
    while True:
        c.sendall(b'z' * 65536)
except ConnectionResetError:
    print('reset', flush=True)
except socket.timeout:
    print('timeout', flush=True)
" >"$T_DIR/kpeer.log" 2>&1
	cpid=$UNET_BG_PID
	wait_ready "$T_DIR/kpeer.log" "$cpid" >/dev/null
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		hold --remote "$IP_B:6400" >"$T_DIR/hold.log" 2>&1
	pid=$UNET_BG_PID
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^holding' "$T_DIR/hold.log" && break
		sleep 0.1
	done
	grep -q '^holding' "$T_DIR/hold.log" || { cat "$T_DIR/hold.log"; fail "hold client did not connect"; }
	local port
	port=$(in_a "$UNETCTL" --json tcp list "$IF_A" | jq -r '[.. | objects | select(has("port"))] | first | .port')
	[[ $port =~ ^[0-9]+$ ]] || fail "the connection's port is not listed"
	kill -KILL "$pid"
	unet_bg_wait "$pid" 5
	[[ $(in_a "$UNETCTL" --json tcp list "$IF_A" | jq -r '[.. | objects | select(has("port"))] | first | .stale') == true ]] ||
		fail "the dead owner's port is not listed stale"
	unet_bg_wait "$cpid" 30 || true
	cat "$T_DIR/kpeer.log"
	grep -qx reset "$T_DIR/kpeer.log" || fail "the kernel peer did not see a reset"
	local r
	r=$(in_a "$UNETCTL" --json reclaim "$IF_A" | jq -r '.removed') || fail "reclaim failed"
	((r >= 2)) || fail "reclaim removed $r entries, want >= 2 (endpoint + port)"
	[[ $(in_a "$UNETCTL" --json tcp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "the port survived reclaim"
	note "next run clean: the same listening port again, at once"
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 30 \
		echo --port 5400 --conns 1 >"$T_DIR/uecho2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho2.log" "$pid" >/dev/null
	in_b timeout 20 python3 "$TPEER" sizes "$IP_A:5400" --max 2048 >/dev/null ||
		fail "the next run did not serve"
	finish "$pid" "$T_DIR/uecho2.log" 10 "second U-Net echo"
	in_a python3 -c "
import socket
s = socket.socket(); s.bind(('$IP_A', 5400)); s.listen()" ||
		fail "the kernel cannot bind the port U-Net gave back"
}

t_tcp_hostile() {
	tcp_setup
	local pid
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 100 \
		echo --port 5500 --backlog 256 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	in_b timeout 90 python3 "$THOSTILE" "$IF_B" "$MAC_A" "$IP_B" "$IP_A" 5500 \
		>"$T_DIR/hostile.log" 2>&1 || { cat "$T_DIR/hostile.log"; fail "hostile input test failed"; }
	cat "$T_DIR/hostile.log"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	local cookies
	cookies=$(tcpstat "$T_DIR/uecho.log" rx_syn_cookies)
	note "SYNs answered with a SYN cookie: $cookies"
	((cookies >= 10000)) || fail "the 10 000 spoofed SYNs were not answered with cookies"
	(($(tcpstat "$T_DIR/uecho.log" syn_cookie_conns) >= 3)) || fail "the real connections were not made from cookies"
	# every drop counted by its reason (docs/tcp.md): 3 x 2 bad checksums,
	# 3 x 3 segments outside the window (lwIP drops them with an ACK)
	[[ $(tcpstat "$T_DIR/uecho.log" rx_bad_csum) == 6 ]] ||
		fail "rx_bad_csum is $(tcpstat "$T_DIR/uecho.log" rx_bad_csum), want 6"
	(($(tcpstat "$T_DIR/uecho.log" rx_out_of_window) >= 9)) ||
		fail "rx_out_of_window is $(tcpstat "$T_DIR/uecho.log" rx_out_of_window), want at least 9"
	expect_stat a drop_tcp_malformed "$(grep -c '^sent malformed' "$T_DIR/hostile.log")"
}

# RFC 6528 ISNs (docs/tcp.md, "Initial sequence numbers").  lwIP's own
# is 6510 + tcp_ticks, cumulatively: the first connection of a fresh
# process gets 6510 and a few.  Two fresh U-Net servers, two SYNs each
# (by hand, tcp-isn.py): four ISNs, all different, none within 2^20 of
# 6510.  Then a live kernel connection to a fresh U-Net server, and a
# blind attacker (frames by hand from a's side of the link, as a third
# host there would send them) that knows the addresses and the server's
# port: RSTs to every port of the kernel client's ephemeral range
# (narrowed to 4096 ports to bound the sweep) x lwIP's first 16 ISNs + 1.
# The connection must still echo afterwards.
t_tcp_isn() {
	tcp_setup
	local pid i isns=() v
	TISN=$ROOT/tests/tools/tcp-isn.py
	for i in 1 2; do
		unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 30 \
			echo --port 5600 >"$T_DIR/uisn$i.log" 2>&1
		pid=$UNET_BG_PID
		wait_ready "$T_DIR/uisn$i.log" "$pid" >/dev/null
		in_b timeout 20 python3 "$TISN" isn "$IF_B" "$MAC_A" "$IP_B" "$IP_A" 5600 --count 2 \
			>"$T_DIR/isn$i.log" 2>&1 || { cat "$T_DIR/isn$i.log"; fail "no SYN-ACK from the U-Net server"; }
		stop "$pid" "$T_DIR/uisn$i.log" "U-Net echo $i"
		for v in $(sed -n 's/^isn //p' "$T_DIR/isn$i.log"); do
			isns+=("$v")
		done
	done
	note "ISNs of two fresh servers, two connections each: ${isns[*]}"
	((${#isns[@]} == 4)) || fail "want 4 ISNs, got ${#isns[@]}"
	[[ $(printf '%s\n' "${isns[@]}" | sort -u | wc -l) == 4 ]] || fail "ISNs repeat: ${isns[*]}"
	for v in "${isns[@]}"; do
		((v - 6510 >= 1 << 20 || v < 6510)) || fail "ISN $v: lwIP's predictable 6510 + tcp_ticks"
	done

	note "blind RST sweep against a live kernel -> U-Net connection"
	in_b sysctl -qw net.ipv4.ip_local_port_range="40000 44095" || fail "ip_local_port_range"
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		echo --port 5601 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	local go=$T_DIR/go cpid
	unet_bg_b python3 -c "
import os, socket, time
c = socket.create_connection(('$IP_A', 5601), timeout=5)
print('ready port=%d' % c.getsockname()[1], flush=True)
for _ in range(300):
    if os.path.exists('$go'):
        break
    time.sleep(0.1)
try:
    c.sendall(b'still here')
    c.settimeout(5)
    print('echo', c.recv(100).decode(), flush=True)
except OSError as e:
    print('error', e, flush=True)
" >"$T_DIR/kclient.log" 2>&1
	cpid=$UNET_BG_PID
	wait_ready "$T_DIR/kclient.log" "$cpid" >/dev/null
	in_a timeout 70 python3 "$TISN" sweep "$IF_A" "$MAC_B" "$IP_A" "$IP_B" 5601 40000 44095 6511 16 \
		>"$T_DIR/sweep.log" 2>&1 || { cat "$T_DIR/sweep.log"; fail "the RST sweep failed"; }
	cat "$T_DIR/sweep.log"
	sleep 0.5
	touch "$go"
	unet_bg_wait "$cpid" 15 || true
	cat "$T_DIR/kclient.log"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	grep -qx "echo still here" "$T_DIR/kclient.log" || fail "the blind RST sweep reset the live connection"
}

# SYN floods (docs/tcp.md, "SYN floods"): spoofed SYNs at the listening
# port as fast as a process can send them, until the clients are done
# (8 s at most); once 20 000 are out, 20 real
# kernel clients connect and echo one after another, each within 3 s,
# then 20 clients made by hand from an address nobody has that wait 5 ms
# (an ordinary round trip; netem is not in this kernel) before their ACK.
# All 40 must get through during the flood.
t_tcp_synflood() {
	tcp_setup
	local pid
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		echo --port 5700 >"$T_DIR/uecho.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho.log" "$pid" >/dev/null
	in_b timeout 60 python3 "$ROOT/tests/tools/tcp-synflood.py" "$IF_B" "$MAC_A" "$IP_A" 5700 8 \
		"$IP_B" 20 "${IP_B%.*}.77" 5 >"$T_DIR/flood.log" 2>&1
	local rc=$?
	cat "$T_DIR/flood.log"
	stop "$pid" "$T_DIR/uecho.log" "U-Net echo"
	((rc == 0)) || fail "real clients were locked out by the SYN flood"
	grep -q "s, during the flood$" "$T_DIR/flood.log" || fail "the clients did not all run during the flood"
}

# Memory per segment (docs/tcp.md, "Memory"): a U-Net server that never
# reads; two connections made by hand (tcp-tiny.py, from an address
# nobody has) send it 20 000 1-byte segments each, one in order, one out
# of order (a hole at the first byte).  lwIP alone kept a pbuf of ~120
# bytes per byte for both.  The server's heap (mallinfo2) may grow by at
# most 256 KiB with them all sent and the connections open.
t_tcp_tiny() {
	tcp_setup
	local pid grew
	unet_bg_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 60 \
		idle --port 5800 >"$T_DIR/uidle.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uidle.log" "$pid" >/dev/null
	in_b timeout 80 python3 "$ROOT/tests/tools/tcp-tiny.py" "$IF_B" "$MAC_A" "${IP_B%.*}.78" "$IP_A" \
		5800 20000 >"$T_DIR/tiny.log" 2>&1 || { cat "$T_DIR/tiny.log"; fail "tcp-tiny.py failed"; }
	cat "$T_DIR/tiny.log"
	stop "$pid" "$T_DIR/uidle.log" "U-Net idle server"
	grew=$(sed -n 's/^idle conns=2 heap_grew=\(-*[0-9]*\)$/\1/p' "$T_DIR/uidle.log")
	[[ -n $grew ]] || fail "the idle server did not hold both connections"
	note "heap grew by $grew bytes for 40 000 1-byte segments"
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		note "under ASan mallinfo2 does not see the allocator: bound not checked"
	else
		((grew < 256 * 1024)) || fail "the server holds $grew bytes for 40 000 bytes of data"
	fi
}

# Batched sending (lib/core/layer.h, unet_layer_queue): lwIP's frames go
# on the send queue without a kick and leave in one kick per call.  After
# the window has opened, one unet_tcp__send of 64 KiB puts ~45 segments
# on the queue at once, then the U-Net side makes no call for 3 s: the
# kernel peer must have every byte by then (fails if the kick that ends
# the call is missing: seen, the peer then lacks the last ~17 KB), in
# order (the pattern is checked).
t_tcp_batch() {
	tcp_setup
	local pid total got
	unet_bg_b python3 -c "
import socket
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('$IP_B', 6601))
l.listen()
print('ready port=6601', flush=True)
c, _ = l.accept()
got, bad = 0, False
c.settimeout(20)
while True:
    try:
        d = c.recv(1 << 20)
    except socket.timeout:
        print('idle got=%d bad=%d' % (got, bad), flush=True)
        break
    if not d:
        print('eof got=%d' % got, flush=True)
        break
    bad = bad or d != bytes((got + i) % 251 for i in range(len(d)))
    got += len(d)
    c.settimeout(1.5)
" >"$T_DIR/kq.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kq.log" "$pid" >/dev/null
	in_a "$UTCP" "$IF_A" --local "$IP_A" --xdp-mode "$T_MODE" --timeout 30 \
		quiet --remote "$IP_B:6601" --bytes $((8 << 20)) >"$T_DIR/quiet.log" 2>&1 ||
		{ cat "$T_DIR/quiet.log"; fail "the U-Net quiet client failed"; }
	unet_bg_wait "$pid" 10 >/dev/null
	cat "$T_DIR/quiet.log" "$T_DIR/kq.log"
	total=$(sed -n 's/^quiet total=\([0-9]*\).*/\1/p' "$T_DIR/quiet.log")
	got=$(sed -n 's/^idle got=\([0-9]*\) bad=0$/\1/p' "$T_DIR/kq.log")
	[[ -n $total && -n $got ]] || fail "no figures from the client or the peer"
	[[ $(sed -n 's/.* last=\([0-9]*\)$/\1/p' "$T_DIR/quiet.log") -gt $((32 * 1460)) ]] ||
		fail "the last send was not more than one kick's worth of segments"
	((got == total)) || fail "the kernel peer got $got bytes while U-Net was quiet, want $total"
}

# tcp_threads_run BIN: two U-Net endpoints in one process (BIN, built
# from tests/tools/unet-tcp-threads.c), one per thread, on a's end of
# two veth pairs (the test's second pair: 10.202.0.1 <-> 10.202.0.2),
# each connected to its own kernel echo on b; 3 s of traffic both at
# once, every byte checked.  lwIP's timers run from either thread's
# calls and send for both connections (docs/tcp.md, "Threads").
tcp_threads_run() {
	local bin=$1 if2a="${IF_A}t" if2b="${IF_B}t" p1 p2 rc
	in_a ip link add "$if2a" type veth peer name "$if2b" netns "$NS_B" ||
		fail "cannot create veth $if2a/$if2b"
	in_a ip addr add 10.202.0.1/24 dev "$if2a" && in_a ip link set "$if2a" up &&
		in_b ip addr add 10.202.0.2/24 dev "$if2b" && in_b ip link set "$if2b" up ||
		fail "cannot set up $if2a/$if2b"
	in_a "$UNETCTL" attach "$if2a" --mode "$T_MODE" || fail "unetctl attach $if2a failed"
	if [[ $T_MODE == skb ]]; then
		in_b ethtool -K "$if2b" tso off gso off >/dev/null 2>&1 || fail "ethtool -K $if2b"
	fi
	unet_bg_b python3 "$TPEER" echo "$IP_B:6400" --conns 1 >"$T_DIR/kecho1.log" 2>&1
	p1=$UNET_BG_PID
	unet_bg_b python3 "$TPEER" echo "10.202.0.2:6401" --conns 1 >"$T_DIR/kecho2.log" 2>&1
	p2=$UNET_BG_PID
	wait_ready "$T_DIR/kecho1.log" "$p1" >/dev/null
	wait_ready "$T_DIR/kecho2.log" "$p2" >/dev/null
	in_a env TSAN_OPTIONS="${TSAN_OPTIONS:-} exitcode=66" "$bin" --xdp-mode "$T_MODE" --seconds 3 \
		"$IF_A" "$IP_A" "$IP_B:6400" "$if2a" 10.202.0.1 10.202.0.2:6401 >"$T_DIR/threads.log" 2>&1
	rc=$?
	cat "$T_DIR/threads.log"
	grep -q 'ThreadSanitizer' "$T_DIR/threads.log" &&
		fail "ThreadSanitizer reported $(grep -c '^WARNING: ThreadSanitizer' "$T_DIR/threads.log") problem(s)"
	((rc == 0)) || fail "unet-tcp-threads exited with $rc"
	[[ $(grep -c '^thread [12] ok ' "$T_DIR/threads.log") == 2 ]] || fail "not both threads verified"
	finish "$p1" "$T_DIR/kecho1.log" 20 "kernel echo 1"
	finish "$p2" "$T_DIR/kecho2.log" 20 "kernel echo 2"
}

t_tcp_threads() {
	tcp_setup
	tcp_threads_run "$BUILD/tools/unet-tcp-threads"
}

# The ThreadSanitizer build lives beside the source (make tsan builds only
# this program and the library objects it needs, in seconds); skipped if
# the compiler has no TSan or its runtime cannot start here.
t_tcp_threads_tsan() {
	local bin=$ROOT/build-tsan/tools/unet-tcp-threads out
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (the same build-tsan program)"
	# One XDP mode: ThreadSanitizer watches the threads, which are the
	# same in both.
	T_MODE=${T_MODE:-native}
	make_tsan
	out=$("$bin" 2>&1)
	if grep -q 'ThreadSanitizer' <<<"$out"; then
		skip "the ThreadSanitizer runtime cannot start here: $(head -1 <<<"$out")"
	fi
	tcp_setup
	tcp_threads_run "$bin"
}

# Seeded fuzz of lib/tcp's input on a live connection (tests/unit/test_tcp_fuzz.c).
t_tcp_fuzz() {
	run_pair_cmocka test_tcp_fuzz 1
}
