# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_tcp.sh - TCP sockets of unmodified programs on U-Net under
# unet-run (docs/unet-run.md) against the kernel's TCP in the other
# namespace.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_tcp|xdp|120|a Python TCP echo server (wildcard bind, listen, accept) and client (blocking and non-blocking connect with SO_ERROR, sendall, shutdown) under unet-run against the kernel's TCP in the other namespace: 1 MB each way byte for byte, over U-Net (the endpoint's log, the namespace's kernel TCP segment counters unmoved)"
)

# kernel_tcp_segs NS: InSegs+OutSegs of the kernel's TCP in that namespace.
kernel_tcp_segs() {
	in_"$1" awk '/^Tcp:/ { if (h) { print $11 + $12; exit } h = 1 }' /proc/net/snmp
}

t_unet_run_tcp() {
	local run_env=() pid before after
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env))
	setup_ns
	attach a
	# skb mode: b's kernel must not hand U-Net segments longer than a frame
	# (docs/tcp.md, as t_tcp.sh's tcp_gso).
	[[ $T_MODE == skb ]] && { in_b ethtool -K "$IF_B" tso off gso off >/dev/null 2>&1 || fail "ethtool -K $IF_B"; }
	run_env+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
	cat >"$T_DIR/echo.py" <<'PY'
import socket, sys
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], int(sys.argv[2]))); ls.listen(8)
print("ready endpoint=0", ls.getsockname(), flush=True)
for _ in range(int(sys.argv[3])):
    c, a = ls.accept()
    total = 0
    while True:
        d = c.recv(65536)
        if not d: break
        c.sendall(d); total += len(d)
    c.close()
    print("echoed", total, a[0], flush=True)
PY
	cat >"$T_DIR/client.py" <<'PY'
import errno, select, socket, sys
peer = (sys.argv[1], int(sys.argv[2])); size = 1 << 20
msg = bytes((i * 131 + 7) % 256 for i in range(size))
def run(c):
    got = bytearray(); sent = 0
    c.setblocking(False)
    while len(got) < size:
        r, w, _ = select.select([c], [c] if sent < size else [], [], 10)
        assert r or w, "stalled"
        if w:
            sent += c.send(msg[sent:sent + 65536])
            if sent == size: c.shutdown(socket.SHUT_WR)
        if r:
            d = c.recv(65536)
            assert d, "early EOF"
            got += d
    assert bytes(got) == msg
    c.setblocking(True)
    assert c.recv(10) == b""
    c.close()
c = socket.create_connection(peer)         # blocking connect
print("peer", c.getpeername() == peer, flush=True)
run(c)
c = socket.socket(); c.setblocking(False)  # non-blocking connect
e = c.connect_ex(peer); assert e in (0, errno.EINPROGRESS), e
select.select([], [c], [], 10)
assert c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
run(c)
print("client ok", flush=True)
PY
	# Kernel client (b) -> U-Net echo server (a).
	before=$(kernel_tcp_segs a)
	unet_bg_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/server.log" \
		/usr/bin/python3 "$T_DIR/echo.py" 0.0.0.0 7500 2 >"$T_DIR/server.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/server.out" "$pid" >/dev/null
	in_b /usr/bin/python3 "$T_DIR/client.py" "$IP_A" 7500 >"$T_DIR/kclient.out" 2>&1 ||
		{ cat "$T_DIR/kclient.out" "$T_DIR/server.log"; fail "kernel client -> U-Net echo failed"; }
	finish "$pid" "$T_DIR/server.out" 30 "U-Net echo server"
	cat "$T_DIR/server.log"
	grep -q "tcp listen 0\.0\.0\.0:7500: U-Net (endpoint" "$T_DIR/server.log" || fail "the listener was not put on U-Net"
	[[ $(grep -c "tcp socket closed: 1048576 bytes received, 1048576 sent over U-Net" "$T_DIR/server.log") == 2 ]] ||
		fail "the server's two connections did not carry 1 MB each way over U-Net"
	after=$(kernel_tcp_segs a)
	((after == before)) || fail "namespace a's kernel TCP counted $((after - before)) segments"

	# U-Net client (a) -> kernel echo server (b).
	unet_bg_b /usr/bin/python3 "$T_DIR/echo.py" "$IP_B" 7501 2 >"$T_DIR/kserver.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kserver.out" "$pid" >/dev/null
	before=$(kernel_tcp_segs a)
	in_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/client.log" \
		/usr/bin/python3 "$T_DIR/client.py" "$IP_B" 7501 >"$T_DIR/uclient.out" 2>&1
	local rc=$?
	cat "$T_DIR/uclient.out" "$T_DIR/client.log"
	((rc == 0)) || fail "U-Net client -> kernel echo failed"
	grep -qx "client ok" "$T_DIR/uclient.out" || fail "the U-Net client did not finish"
	finish "$pid" "$T_DIR/kserver.out" 30 "kernel echo server"
	[[ $(grep -c "echoed 1048576 $IP_A" "$T_DIR/kserver.out") == 2 ]] || fail "the kernel server did not echo 1 MB twice"
	[[ $(grep -c "tcp connect $IP_B:7501: U-Net (endpoint" "$T_DIR/client.log") == 2 ]] ||
		fail "the client's two connections were not put on U-Net"
	after=$(kernel_tcp_segs a)
	((after == before)) || fail "namespace a's kernel TCP counted $((after - before)) segments"
}
