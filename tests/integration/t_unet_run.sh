# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run.sh - unet-run and libunet-preload.so (docs/unet-run.md): an
# unmodified program under unet-run.  Sourced by run.sh (see lib.sh for
# the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_passthrough|-|90|a Python program (UDP and TCP to a kernel server in the other namespace, AF_UNIX, loopback, IPv6) prints the same under unet-run as without it, with and without --iface; the log names each socket and why it stayed with the kernel"
)

# The program run under unet-run: every kind of socket the preload library
# must pass through, each exchange checked byte for byte by the program
# itself (it exits non-zero on a mismatch) and its results printed.
unet_run_client_py() {
	cat <<'PY'
import socket, sys
peer = sys.argv[1]
out = []
# UDP to the kernel echo server, connected and not.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(5)
for i in range(20):
    msg = bytes([i % 256]) * (1 + i * 61)
    u.sendto(msg, (peer, 7101))
    got, src = u.recvfrom(4096)
    assert got == msg and src == (peer, 7101), (i, len(got), src)
out.append("udp sendto/recvfrom 20 ok")
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.settimeout(5)
c.connect((peer, 7101))
c.send(b"connected")
assert c.recv(64) == b"connected"
out.append("udp connect/send/recv ok")
# TCP to the kernel echo server.
t = socket.create_connection((peer, 7102), timeout=5)
data = bytes(range(256)) * 400
t.sendall(data)
t.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = t.recv(65536)
    if not b:
        break
    got += b
assert got == data, len(got)
out.append("tcp %d bytes echoed" % len(got))
# AF_UNIX, loopback and IPv6: never U-Net's.
a, b = socket.socketpair()
a.sendall(b"unix")
assert b.recv(4) == b"unix"
out.append("unix socketpair ok")
l = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
l.bind(("127.0.0.1", 0))
l.sendto(b"lo", l.getsockname())
assert l.recv(2) == b"lo"
out.append("loopback udp ok")
try:
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s6.close()
    out.append("ipv6 socket ok")
except OSError as e:
    out.append("ipv6 socket: %s" % e.strerror)
for s in (u, c, t, a, b, l):
    s.close()
print("\n".join(out))
PY
}

# The kernel echo servers (UDP 7101, TCP 7102) in namespace b.
unet_run_server_py() {
	cat <<'PY'
import socket, sys, threading
ip = sys.argv[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((ip, 7101))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((ip, 7102))
t.listen(8)
def udp():
    while True:
        d, a = u.recvfrom(65536)
        u.sendto(d, a)
def tcp():
    while True:
        s, _ = t.accept()
        while True:
            d = s.recv(65536)
            if not d:
                break
            s.sendall(d)
        s.close()
threading.Thread(target=udp, daemon=True).start()
print("ready server", flush=True)
tcp()
PY
}

# expect_log LOG REGEX WHAT: a line of the unet-run log matches.
expect_log() {
	grep -qE "$2" "$1" || fail "unet-run log has no line for $3 (/$2/): $(cat "$1")"
}

t_unet_run_passthrough() {
	local run=$BUILD/unet-run py=/usr/bin/python3 pid want got lg
	[[ -x $run && -f $BUILD/libunet-preload.so ]] || fail "unet-run or libunet-preload.so not built in $BUILD"
	[[ -x $py ]] || skip "no /usr/bin/python3"
	setup_ns
	unet_run_server_py >"$T_DIR/server.py"
	unet_run_client_py >"$T_DIR/client.py"
	in_b "$py" "$T_DIR/server.py" "$IP_B" >"$T_DIR/server.log" 2>&1 &
	pid=$!
	T_CLEANUP+=("kill $pid")
	wait_ready "$T_DIR/server.log" "$pid" >/dev/null

	want=$(in_a "$py" "$T_DIR/client.py" "$IP_B" 2>&1) || fail "client without unet-run failed: $want"
	echo "$want"

	# No interface named and none attached: every socket is the kernel's.
	lg=$T_DIR/run.log
	got=$(in_a "$run" --log "$lg" "$py" "$T_DIR/client.py" "$IP_B" 2>&1) ||
		fail "client under unet-run failed: $got"
	[[ $got == "$want" ]] || fail "output differs under unet-run: $got"
	cat "$lg"
	expect_log "$lg" "udp sendto $IP_B:7101: kernel \(by $IF_A, which has no XDP program attached\)" "the UDP socket"
	expect_log "$lg" "udp connect $IP_B:7101: kernel \(by $IF_A, which has no XDP program attached\)" "the connected UDP socket"
	expect_log "$lg" "tcp connect $IP_B:7102: kernel \(by $IF_A, which has no XDP program attached\)" "the TCP socket"
	expect_log "$lg" "AF_UNIX socketpair: kernel \(not AF_INET\)" "the AF_UNIX pair"
	expect_log "$lg" "udp bind 127\.0\.0\.1:0: kernel \(loopback\)" "the loopback socket"
	expect_log "$lg" "AF_INET6 socket: kernel \(not AF_INET\)" "the IPv6 socket"

	# The interface named (UNET_RUN_IFACE, as the environment gives it):
	# the sockets U-Net would serve are named as such, and still work
	# through the kernel while their protocol is not built.
	lg=$T_DIR/run_iface.log
	got=$(in_a env UNET_RUN_IFACE="$IF_A" "$run" --log "$lg" "$py" "$T_DIR/client.py" "$IP_B" 2>&1) ||
		fail "client under unet-run with UNET_RUN_IFACE failed: $got"
	[[ $got == "$want" ]] || fail "output differs under unet-run with UNET_RUN_IFACE: $got"
	cat "$lg"
	expect_log "$lg" "udp sendto $IP_B:7101: kernel \(by $IF_A: UDP over U-Net is not built in this version\)" "the UDP socket with the interface named"
	expect_log "$lg" "tcp connect $IP_B:7102: kernel \(by $IF_A: TCP over U-Net is not built in this version\)" "the TCP socket with the interface named"
	expect_log "$lg" "udp bind 127\.0\.0\.1:0: kernel \(loopback\)" "the loopback socket with the interface named"
}
