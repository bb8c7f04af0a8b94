# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_udp.sh - UDP sockets of unmodified programs on U-Net under
# unet-run (docs/unet-run.md) against the kernel's UDP in the other
# namespace.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_udp|xdp|120|a Python UDP echo server (wildcard bind) and client (connect, sendto, poll timeouts, MSG_PEEK, FIONREAD) under unet-run talk to the kernel's UDP in the other namespace byte for byte; the XDP program delivered every datagram and the namespace's kernel UDP counters did not move"
)

# kernel_udp_count NS: InDatagrams+OutDatagrams of the kernel's UDP in
# that namespace (/proc/net/snmp).
kernel_udp_count() {
	in_"$1" awk '/^Udp:/ { if (h) { print $2 + $5; exit } h = 1 }' /proc/net/snmp
}

t_unet_run_udp() {
	local run_env=() pid n=200
	[[ ${UNET_SANITIZED:-0} == 1 ]] &&
		run_env=(LD_PRELOAD="$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0)
	setup_ns
	attach a
	cat >"$T_DIR/echo.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready endpoint=0", s.getsockname(), flush=True)
for i in range(int(sys.argv[3])):
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
print("client ok", n, local[0] != "0.0.0.0")
PY
	local before after
	# Kernel client (b) -> U-Net echo server (a), wildcard address.
	before=$(kernel_udp_count a)
	unet_bg_a env "${run_env[@]}" UNET_PIN_ROOT="$UNET_PIN_ROOT" "$BUILD/unet-run" --iface "$IF_A" \
		--log "$T_DIR/server.log" /usr/bin/python3 "$T_DIR/echo.py" 0.0.0.0 7300 "$n" \
		>"$T_DIR/server.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/server.out" "$pid" >/dev/null
	in_b /usr/bin/python3 "$T_DIR/client.py" "$IP_A" 7300 "$n" >"$T_DIR/kclient.out" 2>&1 ||
		{ cat "$T_DIR/kclient.out" "$T_DIR/server.log"; fail "kernel client -> U-Net echo failed"; }
	finish "$pid" "$T_DIR/server.out" 30 "U-Net echo server"
	cat "$T_DIR/server.log"
	grep -q "udp bind 0\.0\.0\.0:7300: U-Net (endpoint [0-9]* on $IF_A (direct), port 7300)" \
		"$T_DIR/server.log" || fail "the server's socket was not put on U-Net"
	grep -q "udp socket closed: $n datagrams received, $n sent over U-Net" "$T_DIR/server.log" ||
		fail "the server's socket did not count $n datagrams each way over U-Net"
	after=$(kernel_udp_count a)
	((after == before)) || fail "namespace a's kernel UDP counted $((after - before)) datagrams"
	expect_stat a udp_delivered "$n"

	# U-Net client (a) -> kernel echo server (b).
	unet_bg_b /usr/bin/python3 "$T_DIR/echo.py" "$IP_B" 7301 "$n" >"$T_DIR/kserver.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kserver.out" "$pid" >/dev/null
	before=$(kernel_udp_count a)
	in_a env "${run_env[@]}" UNET_PIN_ROOT="$UNET_PIN_ROOT" "$BUILD/unet-run" --iface "$IF_A" \
		--log "$T_DIR/client.log" /usr/bin/python3 "$T_DIR/client.py" "$IP_B" 7301 "$n" \
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
	expect_stat a udp_delivered $((2 * n))
}
