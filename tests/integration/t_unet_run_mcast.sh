# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_mcast.sh - UDP multicast receive on U-Net under unet-run
# (docs/unet-run.md, "Multicast"): IP_ADD_MEMBERSHIP and
# IP_DROP_MEMBERSHIP against a kernel sender in the other namespace.
# Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_mcast_hosts|-|90|three namespace hosts on a bridge (scripts/hosts.sh, skb mode): two Python receivers under unet-run on two hosts join one group; a kernel sender on the third joins nothing and sends 200 datagrams: each receiver gets all 200, in order, byte for byte, over U-Net (its host's kernel UDP counters unmoved)"
	"unet_run_mcast|-|90|a Python receiver under unet-run (native mode) joins two groups on its wildcard-bound UDP socket (ip_mreq and ip_mreqn); a kernel sender in the other namespace sends 20 datagrams to each: all 40 arrive byte for byte over U-Net (the XDP program's udp_delivered +40, the namespace's kernel UDP counters unmoved), the kernel announced both memberships (/proc/net/igmp); IP_ADD_SOURCE_MEMBERSHIP is refused (EOPNOTSUPP); after IP_DROP_MEMBERSHIP both groups are gone from igmp and 10 more datagrams to each reach neither U-Net nor the program, whose next datagram is a unicast marker sent after them"
)

# igmp_has NS IF GROUP: the kernel's membership list of IF holds GROUP
# (/proc/net/igmp prints groups as little-endian hex on x86).
igmp_has() {
	local hex o1 o2 o3 o4
	IFS=. read -r o1 o2 o3 o4 <<<"$3"
	hex=$(printf '%02X%02X%02X%02X' "$o4" "$o3" "$o2" "$o1")
	# shellcheck disable=SC2016
	in_"$1" awk -v dev="$2" -v g="$hex" '
		/^[0-9]/ { cur = $2 }
		/^\t/ && cur == dev && $1 == g { found = 1 }
		END { exit !found }' /proc/net/igmp
}

t_unet_run_mcast() {
	local run_env=() pid before after d0 i
	local g1=239.7.7.1 g2=239.7.7.2
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env))
	T_MODE=${T_MODE:-native}
	setup_ns
	attach a
	run_env+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
	cat >"$T_DIR/recv.py" <<'PY'
import errno, socket, struct, sys
g1, g2, me, ifname, fifo = sys.argv[1:6]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7950))
s.settimeout(20)
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton(g1) + socket.inet_aton("0.0.0.0"))           # ip_mreq
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton(g2) + socket.inet_aton("0.0.0.0") +
             struct.pack("=i", socket.if_nametoindex(ifname)))            # ip_mreqn
try:
    s.setsockopt(socket.IPPROTO_IP, 39,  # IP_ADD_SOURCE_MEMBERSHIP (ip_mreq_source)
                 socket.inet_aton("239.7.7.3") + socket.inet_aton("0.0.0.0") +
                 socket.inet_aton("10.0.0.9"))
    print("source membership accepted", flush=True)
except OSError as e:
    print("source membership:", "EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else e, flush=True)
print("ready endpoint=0", flush=True)
want = {g1: [b"%s #%d" % (g1.encode(), i) for i in range(20)],
        g2: [b"%s #%d" % (g2.encode(), i) for i in range(20)]}
got = {g1: [], g2: []}
for _ in range(40):
    d, a = s.recvfrom(2048)
    got[d.split(b" ")[0].decode()].append(d)
assert got == want, got
print("received 40", flush=True)
for g in (g1, g2):
    s.setsockopt(socket.IPPROTO_IP, socket.IP_DROP_MEMBERSHIP,
                 socket.inet_aton(g) + socket.inet_aton("0.0.0.0"))
print("dropped", flush=True)
open(fifo).read()
d, a = s.recvfrom(2048)
print("next:", d.decode(), flush=True)
PY
	cat >"$T_DIR/send.py" <<'PY'
import socket, sys
me, n, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(me))
for g in sys.argv[4:]:
    for i in range(n):
        s.sendto(b"%s #%d" % (g.encode(), i), (g, 7950))
if marker != "-":
    s.sendto(b"marker", (marker, 7950))
PY
	mkfifo "$T_DIR/go"
	before=$(kernel_udp_in a)
	d0=$(counter a udp_delivered) || exit 1
	unet_bg_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/recv.log" \
		/usr/bin/python3 "$T_DIR/recv.py" "$g1" "$g2" "$IP_A" "$IF_A" "$T_DIR/go" >"$T_DIR/recv.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/recv.out" "$pid" >/dev/null
	grep -qx "source membership: EOPNOTSUPP" "$T_DIR/recv.out" ||
		{ cat "$T_DIR/recv.out"; fail "IP_ADD_SOURCE_MEMBERSHIP on a U-Net socket was not refused"; }
	if ! igmp_has a "$IF_A" "$g1" || ! igmp_has a "$IF_A" "$g2"; then
		in_a cat /proc/net/igmp
		fail "the kernel did not join both groups on $IF_A"
	fi
	in_b /usr/bin/python3 "$T_DIR/send.py" "$IP_B" 20 - "$g1" "$g2" || fail "the sender failed"
	for ((i = 0; i < 100; i++)); do
		grep -qx dropped "$T_DIR/recv.out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -qx "received 40" "$T_DIR/recv.out" || { cat "$T_DIR/recv.out" "$T_DIR/recv.log"; fail "the receiver did not get the 40 datagrams"; }
	grep -qx dropped "$T_DIR/recv.out" || fail "the receiver did not drop its memberships"
	after=$(kernel_udp_in a)
	((after == before)) || fail "namespace a's kernel UDP counted $((after - before)) datagrams"
	expect_stat a udp_delivered $((d0 + 40))
	if igmp_has a "$IF_A" "$g1" || igmp_has a "$IF_A" "$g2"; then
		fail "a group is still joined after IP_DROP_MEMBERSHIP"
	fi
	# After the drop: 10 more to each group, then a unicast marker.
	in_b /usr/bin/python3 "$T_DIR/send.py" "$IP_B" 10 "$IP_A" "$g1" "$g2" || fail "the sender failed"
	# shellcheck disable=SC2016
	timeout 10 sh -c ': >"$1"' sh "$T_DIR/go" || fail "the receiver does not wait on its FIFO"
	finish "$pid" "$T_DIR/recv.out" 20 "multicast receiver under unet-run"
	cat "$T_DIR/recv.log"
	grep -qx "next: marker" "$T_DIR/recv.out" || fail "a group datagram reached the receiver after the drop"
	expect_stat a udp_delivered $((d0 + 41))
	grep -q "udp join $g1 on $IF_A: U-Net (port 7950)" "$T_DIR/recv.log" || fail "the join was not logged as on U-Net"
	grep -q "udp leave $g2: U-Net" "$T_DIR/recv.log" || fail "the leave was not logged"
}

t_unet_run_mcast_hosts() {
	local name="m$$" hs=$ROOT/scripts/hosts.sh g=239.7.8.1 k pids=() before=() after
	grep -qw bpf /proc/filesystems || skip "this kernel has no bpffs"
	T_CLEANUP+=("\"$hs\" down $name")
	"$hs" up 3 --name "$name" --build "$BUILD" --mode skb >"$T_DIR/up.log" 2>&1 ||
		{ cat "$T_DIR/up.log"; fail "hosts.sh up 3 failed"; }
	cat >"$T_DIR/recv.py" <<'PY'
import socket, sys
g = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 7960))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(g) + socket.inet_aton("0.0.0.0"))
s.settimeout(20)
print("ready endpoint=0", flush=True)
got = [s.recv(2048) for _ in range(200)]
want = [b"%d " % i + bytes(i % 251 for _ in range(100 + i)) for i in range(200)]
print("received 200 in order" if got == want else "received 200, NOT as sent", flush=True)
PY
	for k in 2 3; do
		before[k]=$(kernel_udp_in "${name}h$k")
		"$hs" exec "$name" "$k" -- env $(unet_run_env) "$BUILD/unet-run" --iface eth0 --log "$T_DIR/recv$k.log" \
			/usr/bin/python3 "$T_DIR/recv.py" "$g" >"$T_DIR/recv$k.out" 2>&1 &
		pids[k]=$!
	done
	for k in 2 3; do
		wait_ready "$T_DIR/recv$k.out" "${pids[k]}" >/dev/null
	done
	# The sender joins nothing; 2 ms apart, so neither receiver's queue
	# can overflow on a loaded machine (the property is delivery to both).
	"$hs" exec "$name" 1 -- /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("10.202.0.1"))
for i in range(200):
    s.sendto(b"%d " % i + bytes(i % 251 for _ in range(100 + i)), (sys.argv[1], 7960))
    time.sleep(0.002)
' "$g" || fail "the sender failed"
	for k in 2 3; do
		finish "${pids[k]}" "$T_DIR/recv$k.out" 20 "receiver on host $k"
		grep -qx "received 200 in order" "$T_DIR/recv$k.out" || fail "host $k did not get all 200 datagrams in order"
		grep -q "udp join $g on eth0: U-Net (port 7960)" "$T_DIR/recv$k.log" ||
			{ cat "$T_DIR/recv$k.log"; fail "host $k's join was not on U-Net"; }
		after=$(kernel_udp_in "${name}h$k")
		((after == before[k])) || fail "host $k's kernel UDP counted $((after - before[k])) datagrams"
	done
}
