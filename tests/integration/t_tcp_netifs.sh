# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_tcp_netifs.sh - TCP over U-Net in a process with endpoints on two
# interfaces: one lwIP serves both, so what one endpoint's segments can
# make lwIP do reaches the other's netif.  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"tcp_other_netif|-|60|a process with U-Net TCP connections on two interfaces (a Python client under unet-run --iface IF1,IF2): a host on the first link sends one ACK to the first connection's port from the second endpoint's own address; the segment is dropped and counted before lwIP, and the process lives on and keeps both connections (lwIP's reset to its own other address went down its loopback path and aborted the process)"
)

t_tcp_other_netif() {
	local a2 b2 pid port1
	T_MODE=${T_MODE:-native}
	setup_ns
	a2="${IF_A}x" b2="${IF_B}x"
	ip -n "$NS_A" link add "$a2" type veth peer name "$b2" netns "$NS_B" || fail "second veth pair"
	ip -n "$NS_A" addr add 10.202.0.1/24 dev "$a2"
	ip -n "$NS_B" addr add 10.202.0.2/24 dev "$b2"
	ip -n "$NS_A" link set "$a2" up
	ip -n "$NS_B" link set "$b2" up
	attach a
	ctl_a attach "$a2" --mode native >/dev/null || fail "attach $a2"
	cat >"$T_DIR/srv.py" <<'PY'
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(4)
print("ready endpoint=0", flush=True)
c, _ = s.accept()
c.sendall(b"x" * 10)
time.sleep(30)
PY
	unet_bg_b /usr/bin/python3 "$T_DIR/srv.py" "$IP_B" 7101 >"$T_DIR/s1.out" 2>&1
	wait_ready "$T_DIR/s1.out" "$UNET_BG_PID" >/dev/null
	unet_bg_b /usr/bin/python3 "$T_DIR/srv.py" 10.202.0.2 7102 >"$T_DIR/s2.out" 2>&1
	wait_ready "$T_DIR/s2.out" "$UNET_BG_PID" >/dev/null
	cat >"$T_DIR/client.py" <<'PY'
import select, socket, sys, time
c = [socket.create_connection(a, timeout=10) for a in ((sys.argv[1], 7101), ("10.202.0.2", 7102))]
print("ready endpoint=0 port1=%d" % c[0].getsockname()[1], flush=True)
# The stack runs while the program calls it: poll both connections
# until the test has sent its segment (the end of input), then 1 s more.
got = [b"", b""]
for s in c:
    s.setblocking(False)
end = None
while end is None or time.time() < end:
    r, _, _ = select.select([sys.stdin] if end is None else [], [], [], 0.05)
    if r and not sys.stdin.read():
        end = time.time() + 1
    for i, s in enumerate(c):
        try:
            got[i] += s.recv(100)
        except BlockingIOError:
            pass
assert got == [b"x" * 10, b"x" * 10], got
print("survived, both connections read", flush=True)
PY
	mkfifo "$T_DIR/go"
	# Held open (read-write: the open does not wait) until the segment
	# is sent; its close is the client's end of input.
	exec 7<>"$T_DIR/go"
	unet_bg_a env $(unet_run_env) UNET_PIN_ROOT="$UNET_PIN_ROOT" "$BUILD/unet-run" \
		--iface "$IF_A,$a2" --log "$T_DIR/client.log" /usr/bin/python3 "$T_DIR/client.py" "$IP_B" \
		<"$T_DIR/go" >"$T_DIR/client.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/client.out" "$pid" >/dev/null
	[[ $(grep -c "tcp connect .*: U-Net" "$T_DIR/client.log") == 2 ]] ||
		{ cat "$T_DIR/client.log"; fail "the two connections were not both on U-Net"; }
	port1=$(sed -n 's/.*port1=\([0-9]*\).*/\1/p' "$T_DIR/client.out")
	in_b /usr/bin/python3 - "$IF_B" "$MAC_A" 10.202.0.1 "$IP_A" "$port1" <<'PY' || fail "scapy"
import sys
from scapy.all import Ether, IP, TCP, sendp
ifn, mac, src, dst, port = sys.argv[1:]
sendp(Ether(dst=mac) / IP(src=src, dst=dst) / TCP(sport=4444, dport=int(port), flags="A", seq=1, ack=1),
      iface=ifn, count=1, verbose=False)
PY
	exec 7>&-
	unet_bg_wait "$pid" 20
	local rc=$?
	cat "$T_DIR/client.out"
	((rc == 0)) || { cat "$T_DIR/client.log"; fail "the process died (exit $rc) on one segment from its other endpoint's address"; }
	grep -qx "survived, both connections read" "$T_DIR/client.out" || fail "the connections did not carry on"
}
