# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_udp.sh - UDP sockets of unmodified programs on U-Net under
# unet-run (docs/unet-run.md) against the kernel's UDP in the other
# namespace.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_sockperf_udp|-|240|Debian's sockperf, unmodified, UDP ping-pong (its recvfrom, poll, epoll and select loops): server under unet-run and kernel client, the other way round, and both under unet-run; no message lost, duplicated or out of order, every reply over U-Net (the XDP program's counter, the namespace's kernel UDP counters unmoved)"
	"unet_run_udp|xdp|120|a Python UDP echo server (wildcard bind) and client (connect, sendto, poll timeouts, MSG_PEEK, FIONREAD, fork: the child's inherited socket refuses, the parent's works; two threads on two sockets of the one endpoint; a second process gets EBUSY and the kernel, with the reason) under unet-run talk to the kernel's UDP in the other namespace byte for byte; the XDP program delivered every datagram and the namespace's kernel UDP counters did not move"
)

# kernel_udp_count NS: InDatagrams+OutDatagrams of the kernel's UDP in
# that namespace (/proc/net/snmp).
kernel_udp_count() {
	in_"$1" awk '/^Udp:/ { if (h) { print $2 + $5; exit } h = 1 }' /proc/net/snmp
}

t_unet_run_udp() {
	local run_env=() pid n=200
	# A sanitized preload needs libasan first (t_unet_run.sh's unet_run_env).
	# shellcheck disable=SC2207
	run_env=($(unet_run_env))
	setup_ns
	attach a
	cat >"$T_DIR/echo.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready endpoint=0", s.getsockname(), flush=True)
for i in range(int(sys.argv[3]) * int((sys.argv[4:] or [1])[0])):
    d, a = s.recvfrom(2048)
    s.sendto(d, a)
print("echo done", flush=True)
PY
	cat >"$T_DIR/client.py" <<'PY'
import fcntl, socket, struct, sys, termios
peer = (sys.argv[1], int(sys.argv[2])); n = int(sys.argv[3])
def payload(i): return bytes((i * 7 + k) % 256 for k in range(1 + (i * 37) % 1400))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(5)           # nonblocking descriptor + poll inside Python
for i in range(n // 2):
    u.sendto(payload(i), peer)
    d, a = u.recvfrom(2048)
    assert d == payload(i) and a == peer, (i, len(d), a)
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.connect(peer)           # blocking, connected
local = c.getsockname()
assert local[1] != 0, local
for i in range(n // 2, n):
    c.send(payload(i))
    if i == n // 2:
        p = c.recv(2048, socket.MSG_PEEK)
        nread = struct.unpack("i", fcntl.ioctl(c.fileno(), termios.FIONREAD, b"\0" * 4))[0]
        assert p == payload(i) and nread == len(p), (len(p), nread)
    assert c.recv(2048) == payload(i), i
u.settimeout(0.2)
try:
    u.recvfrom(2048); print("unexpected datagram"); sys.exit(1)
except socket.timeout:
    pass
if sys.argv[4:] == ["fork"]:
    # A child of fork has no right to the parent's endpoint: its
    # inherited U-Net socket refuses; the parent's keeps working.
    import errno, os
    pid = os.fork()
    if pid == 0:
        try:
            c.send(b"child"); os._exit(3)
        except OSError as e:
            os._exit(0 if e.errno == errno.EOPNOTSUPP else 4)
    _, st = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(st) == 0, ("child", os.WEXITSTATUS(st))
    c.send(payload(1)); assert c.recv(2048) == payload(1)
    # Two threads, each on its own socket of the one shared endpoint,
    # at once: whichever drains the endpoint hands the other its replies.
    import threading
    u.settimeout(None)
    errs = []
    def pingpong(sock, first):
        try:
            for i in range(first, first + 100):
                sock.sendto(payload(i), peer)
                d, a = sock.recvfrom(2048)
                assert d == payload(i) and a == peer, (first, i, len(d))
        except Exception as e:
            errs.append(repr(e))
    ts = [threading.Thread(target=pingpong, args=(x, f)) for x, f in ((u, 1000), (c, 2000))]
    for t in ts: t.start()
    for t in ts: t.join()
    assert not errs, errs
print("client ok", n, local[0] != "0.0.0.0")
PY
	local before after
	# Kernel client (b) -> U-Net echo server (a), wildcard address.
	before=$(kernel_udp_count a)
	unet_bg_a env "${run_env[@]}" UNET_PIN_ROOT="$UNET_PIN_ROOT" "$BUILD/unet-run" --iface "$IF_A" \
		--log "$T_DIR/server.log" /usr/bin/python3 "$T_DIR/echo.py" 0.0.0.0 7300 "$n" 2 \
		>"$T_DIR/server.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/server.out" "$pid" >/dev/null
	in_b /usr/bin/python3 "$T_DIR/client.py" "$IP_A" 7300 "$n" >"$T_DIR/kclient.out" 2>&1 ||
		{ cat "$T_DIR/kclient.out" "$T_DIR/server.log"; fail "kernel client -> U-Net echo failed"; }
	# A second process under unet-run meanwhile: the queue's one UMEM is
	# the server's (EBUSY), unetd does not run here, so its socket falls
	# back to the kernel before any data moved, and says why.
	local kpid
	unet_bg_b /usr/bin/python3 "$T_DIR/echo.py" "$IP_B" 7302 10 >"$T_DIR/kecho2.out" 2>&1
	kpid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho2.out" "$kpid" >/dev/null
	in_a env "${run_env[@]}" UNET_PIN_ROOT="$UNET_PIN_ROOT" UNET_DAEMON_SOCKET="$T_DIR/no-unetd.sock" \
		"$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/second.log" \
		/usr/bin/python3 "$T_DIR/client.py" "$IP_B" 7302 10 >"$T_DIR/second.out" 2>&1 ||
		{ cat "$T_DIR/second.out" "$T_DIR/second.log"; fail "the second process's client failed"; }
	cat "$T_DIR/second.log"
	grep -q "udp sendto $IP_B:7302: kernel (no endpoint on $IF_A: direct: Device or resource busy; through unetd: " \
		"$T_DIR/second.log" || fail "the second process did not fall back to the kernel with the reason"
	finish "$kpid" "$T_DIR/kecho2.out" 30 "kernel echo server for the second process"
	before=$(kernel_udp_count a)
	in_b /usr/bin/python3 "$T_DIR/client.py" "$IP_A" 7300 "$n" >"$T_DIR/kclient2.out" 2>&1 ||
		fail "kernel client -> U-Net echo failed (second round)"
	finish "$pid" "$T_DIR/server.out" 30 "U-Net echo server"
	cat "$T_DIR/server.log"
	grep -q "udp bind 0\.0\.0\.0:7300: U-Net (endpoint [0-9]* on $IF_A (direct), port 7300)" \
		"$T_DIR/server.log" || fail "the server's socket was not put on U-Net"
	grep -q "udp socket closed: $((2 * n)) datagrams received, $((2 * n)) sent over U-Net" "$T_DIR/server.log" ||
		fail "the server's socket did not count $((2 * n)) datagrams each way over U-Net"
	after=$(kernel_udp_count a)
	((after == before)) || fail "namespace a's kernel UDP counted $((after - before)) datagrams"
	expect_stat a udp_delivered $((2 * n))

	# U-Net client (a) -> kernel echo server (b).
	unet_bg_b /usr/bin/python3 "$T_DIR/echo.py" "$IP_B" 7301 $((n + 201)) >"$T_DIR/kserver.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kserver.out" "$pid" >/dev/null
	before=$(kernel_udp_count a)
	in_a env "${run_env[@]}" UNET_PIN_ROOT="$UNET_PIN_ROOT" "$BUILD/unet-run" --iface "$IF_A" \
		--log "$T_DIR/client.log" /usr/bin/python3 "$T_DIR/client.py" "$IP_B" 7301 "$n" fork \
		>"$T_DIR/uclient.out" 2>&1
	local rc=$?
	cat "$T_DIR/uclient.out" "$T_DIR/client.log"
	((rc == 0)) || fail "U-Net client -> kernel echo failed"
	grep -qx "client ok $n True" "$T_DIR/uclient.out" || fail "the U-Net client did not finish"
	finish "$pid" "$T_DIR/kserver.out" 30 "kernel echo server"
	[[ $(grep -c "udp .*: U-Net (endpoint" "$T_DIR/client.log") == 2 ]] ||
		fail "the client's two sockets were not both put on U-Net"
	after=$(kernel_udp_count a)
	((after == before)) || fail "namespace a's kernel UDP counted $((after - before)) datagrams"
	expect_stat a udp_delivered $((3 * n + 201))
}

# sockperf_check LOG: a ping-pong client's summary with every message
# answered, none dropped, duplicated or out of order; prints the count.
sockperf_check() {
	local log=$1 sent recv
	sent=$(sed -n 's/.*SentMessages=\([0-9]*\).*/\1/p' "$log" | tail -1)
	recv=$(sed -n 's/.*ReceivedMessages=\([0-9]*\).*/\1/p' "$log" | tail -1)
	[[ $sent =~ ^[0-9]+$ && $recv =~ ^[0-9]+$ ]] || { cat "$log"; fail "no sockperf summary in $log"; }
	((sent > 100)) || fail "sockperf sent only $sent messages"
	grep -qE "dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0" "$log" ||
		{ cat "$log"; fail "sockperf saw lost, duplicated or reordered messages ($log)"; }
	# The client stops sending at the deadline: at most the one in flight is not answered.
	((recv >= sent - 1)) || fail "sockperf: $sent sent, $recv received"
	echo "$recv"
}

t_unet_run_sockperf_udp() {
	command -v sockperf >/dev/null || skip "sockperf is not installed"
	local run_env=() pid before after n delivered=0 mux
	# One XDP mode (native): what sockperf's four waits exercise is the
	# library, the same in both; unet_run_udp covers both modes.
	T_MODE=${T_MODE:-native}
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env))
	setup_ns
	attach a
	run_env+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
	# sockperf blocks in recvfrom on one socket given by -i/-p, and
	# multiplexes with -F over the sockets of a feed file (-f).
	echo "U:$IP_A:7400" >"$T_DIR/feed_a"
	echo "U:$IP_B:7401" >"$T_DIR/feed_b"
	local -A how=([recvfrom]="-i $IP_A -p 7400" [poll]="-f $T_DIR/feed_a -F p"
		[epoll]="-f $T_DIR/feed_a -F e" [select]="-f $T_DIR/feed_a -F s")
	for mux in recvfrom poll epoll select; do
		# U-Net server (a) <- kernel client (b).
		before=$(kernel_udp_count a)
		# shellcheck disable=SC2086
		unet_bg_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/sr_$mux.log" \
			sockperf sr ${how[$mux]} >"$T_DIR/sr_$mux.out" 2>&1
		pid=$UNET_BG_PID
		wait_log 15 "$T_DIR/sr_$mux.log" "udp bind $IP_A:7400: "
		in_b sockperf pp -i "$IP_A" -p 7400 -m 200 -t 1 >"$T_DIR/pp_$mux.out" 2>&1
		n=$(sockperf_check "$T_DIR/pp_$mux.out") || exit 1
		kill -INT "$pid"; unet_bg_wait "$pid" 10
		cat "$T_DIR/sr_$mux.log"
		grep -q "udp bind $IP_A:7400: U-Net" "$T_DIR/sr_$mux.log" || fail "sockperf server ($mux) not on U-Net"
		after=$(kernel_udp_count a)
		((after == before)) || fail "namespace a's kernel UDP counted $((after - before)) datagrams ($mux)"
		# Every request the server answered came through the XDP program
		# (the warm-up's messages come on top).
		delivered=$((delivered + n))
		after=$(counter a udp_delivered) || exit 1
		((after >= delivered)) || fail "the XDP program delivered $after datagrams, fewer than $delivered answered"
		note "server under unet-run, -F $mux: $n round trips"
	done
	# Kernel server (b) <- U-Net client (a), and both under unet-run
	# (b gets the program attached too).
	unet_bg_b sockperf sr -i "$IP_B" -p 7401 >"$T_DIR/ksr.out" 2>&1
	pid=$UNET_BG_PID
	wait_port b udp 7401
	before=$(kernel_udp_count a)
	in_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/pp_u.log" \
		sockperf pp -f "$T_DIR/feed_b" -F p -m 64 -t 1 >"$T_DIR/pp_u.out" 2>&1
	n=$(sockperf_check "$T_DIR/pp_u.out") || exit 1
	cat "$T_DIR/pp_u.log"
	grep -qE "udp (connect|sendto) $IP_B:7401: U-Net" "$T_DIR/pp_u.log" || fail "sockperf client not on U-Net"
	after=$(kernel_udp_count a)
	((after == before)) || fail "namespace a's kernel UDP counted $((after - before)) datagrams (client)"
	delivered=$((delivered + n))
	after=$(counter a udp_delivered) || exit 1
	((after >= delivered)) || fail "the XDP program delivered $after datagrams, fewer than $delivered replies"
	kill -INT "$pid"; unet_bg_wait "$pid" 10
	note "client under unet-run: $n round trips"

	# Both under unet-run: b gets the program attached as well.
	attach b
	echo "U:$IP_B:7402" >"$T_DIR/feed_b2"
	unet_bg_b "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$T_DIR/sr_b.log" \
		sockperf sr -i "$IP_B" -p 7402 >"$T_DIR/sr_b.out" 2>&1
	pid=$UNET_BG_PID
	wait_log 15 "$T_DIR/sr_b.log" "udp bind $IP_B:7402: "
	before=$(kernel_udp_count a)
	local before_b after_b
	before_b=$(kernel_udp_count b)
	in_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/pp_uu.log" \
		sockperf pp -f "$T_DIR/feed_b2" -F e -m 1000 -t 1 >"$T_DIR/pp_uu.out" 2>&1
	n=$(sockperf_check "$T_DIR/pp_uu.out") || exit 1
	kill -INT "$pid"; unet_bg_wait "$pid" 10
	cat "$T_DIR/pp_uu.log" "$T_DIR/sr_b.log"
	grep -q "udp bind $IP_B:7402: U-Net" "$T_DIR/sr_b.log" || fail "sockperf server on b not on U-Net"
	grep -qE "udp (connect|sendto) $IP_B:7402: U-Net" "$T_DIR/pp_uu.log" || fail "sockperf client not on U-Net"
	after=$(kernel_udp_count a)
	after_b=$(kernel_udp_count b)
	((after == before && after_b == before_b)) ||
		fail "the kernels' UDP counted datagrams: a $((after - before)), b $((after_b - before_b))"
	after_b=$(counter b udp_delivered) || exit 1
	((after_b >= n)) || fail "b's XDP program delivered $after_b datagrams, fewer than $n answered"
	note "both under unet-run: $n round trips"
}
