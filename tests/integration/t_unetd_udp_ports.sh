# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetd_udp_ports.sh - a UDP port unetd gives a client is the client's
# alone, against the kernel's sockets too: the daemon refuses a port
# another user's kernel socket holds, and holds the ports it gives with
# a kernel socket of its own.  Sourced by run.sh; uses t_unetd.sh's
# helpers (start_unetd, as_user_cmd).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetd_udp_reserve|-|90|user 65533's kernel UDP server holds port 7050: nobody (granted udp 7000-7200) is refused 7050 on U-Net and 65533's server still gets its datagram; nobody's U-Net port 7060 is held by the daemon's kernel socket, so 65533 cannot bind it; a port held by nobody's own kernel socket is nobody's to take (unet_run_unetd); one user holds at most 256 UDP ports however wide its grant"
)

t_unetd_udp_reserve() {
	local pid vpid wd out r
	T_MODE=${T_MODE:-skb}
	setup_ns
	attach b
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7200"
	wd=$(mktemp -d /tmp/unet-udp-reserve.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$wd'")
	chmod 755 "$wd"
	cat >"$wd/victim.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 7050))
s.settimeout(20)
print("ready endpoint=0", flush=True)
d, a = s.recvfrom(2000)
s.sendto(b"victim got " + d, a)
print("victim got", d.decode(), flush=True)
PY
	chmod 644 "$wd/victim.py"
	ip netns exec "$NS_B" setpriv --reuid=65533 --regid=65533 --clear-groups \
		/usr/bin/python3 "$wd/victim.py" >"$T_DIR/victim.out" 2>&1 &
	vpid=$!
	_UNET_BG_PIDS+=("$vpid")
	wait_ready "$T_DIR/victim.out" "$vpid" >/dev/null
	# nobody asks for the same port on U-Net: refused.
	as_user_cmd 65534
	out=$("${AS[@]}" timeout 20 "$UUDP" echo "$IF_B" --local "$IP_B:7050" --timeout 3 2>&1)
	echo "nobody on 7050: $out"
	grep -q "^ready" <<<"$out" && fail "nobody got port 7050, which 65533's kernel socket holds"
	[[ $out == *"a kernel socket of another user holds it"* ]] || fail "the refusal does not say why"
	r=$(in_a /usr/bin/python3 -c '
import socket, sys
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); c.settimeout(5)
c.sendto(b"secret", (sys.argv[1], 7050))
print(c.recv(2000).decode())
' "$IP_B" 2>&1)
	[[ $r == "victim got secret" ]] || fail "65533's server did not answer: $r"
	unet_bg_wait "$vpid" 10 >/dev/null
	# nobody's U-Net port: the daemon holds it in the kernel too.
	"${AS[@]}" "$UUDP" echo "$IF_B" --local "$IP_B:7060" --timeout 20 >"$T_DIR/nobody.out" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/nobody.out" "$pid" >/dev/null
	out=$(ip netns exec "$NS_B" setpriv --reuid=65533 --regid=65533 --clear-groups /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.bind(("0.0.0.0", 7060)); print("bound")
except OSError as e:
    print("refused", e.errno)
' 2>&1)
	echo "65533 binding 7060 beside nobody's U-Net port: $out"
	[[ $out == "refused 98" ]] || fail "another user's kernel socket could bind nobody's U-Net port 7060: $out"
	kill -TERM "$pid" 2>/dev/null
	unet_bg_wait "$pid" 10 >/dev/null
	stop_unetd
	# A wide grant: one user still holds at most 256 UDP ports (a
	# program under unet-run binding 300: the rest stay the kernel's).
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7999"
	chmod 777 "$wd"
	as_user_cmd 65534
	"${AS[@]}" $(unet_run_env) "$BUILD/unet-run" --iface "$IF_B" --log "$wd/many.log" /usr/bin/python3 -c '
import socket, sys
socks = []
for p in range(7100, 7400):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], p))
    socks.append(s)
print("bound", len(socks), flush=True)
' "$IP_B" >"$T_DIR/many.out" 2>&1 || { cat "$T_DIR/many.out"; fail "the program binding 300 UDP sockets failed"; }
	out=$(grep -c "udp bind $IP_B:[0-9]*: U-Net" "$wd/many.log")
	echo "of 300 UDP sockets, $out on U-Net"
	((out == 256)) || fail "nobody got $out UDP ports on U-Net, not 256"
	grep -q "udp bind $IP_B:7356: kernel (the UDP layer refused .*: Disk quota exceeded)" "$wd/many.log" ||
		{ grep -v ": U-Net" "$wd/many.log" | head -3; fail "the 257th socket's reason is not logged"; }
	stop_unetd
}
