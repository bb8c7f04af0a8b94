# shellcheck shell=bash disable=SC2153 # UNET_BG_PID is netns.sh's
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_reuseport.sh - SO_REUSEPORT across processes under unet-run
# (docs/unet-run.md): two processes share a UDP and a TCP port on U-Net
# through the port's group, and nobody else gets in.  Uses t_unetd.sh's
# helpers (start_unetd, as_user_cmd).  Sourced by run.sh.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"port_group_maps|-|30|SO_REUSEPORT groups in an attached program's maps (build/tests/test_port_group_maps): joining only as the group's user, one place per endpoint slot, a port held without a group not joinable, the port entry moved to a live member when its own leaves or dies, a socket without SO_REUSEPORT kept out while a member lives, reclaim clearing a group nobody is left in"
	"unet_run_reuseport_procs|-|60|two root processes under unet-run (emulated endpoints of unetd: the device's queue is the daemon's) with SO_REUSEPORT on one UDP and one TCP port: 16 kernel senders' 64 datagrams each delivered exactly once over both, every sender's to one process, both getting some; 12 kernel clients' connections spread over both, each echoed 4 KiB byte for byte; nobody's SO_REUSEPORT listener refused by unetd (another user's group; nor a new group beside root's kernel SO_REUSEPORT server, where root's own listener is the kernel's), and root's kernel SO_REUSEPORT server refused beside nobody's group (EADDRINUSE) and a root socket without SO_REUSEPORT refused (EADDRINUSE, UDP and TCP); one member SIGKILLed, the other gets every datagram and connection after; nobody's group ports bounded (64)"
)

t_port_group_maps() {
	T_MODE=${T_MODE:-native}
	run_pair_cmocka test_port_group_maps 3
}

# rp_send FIRST_PORT: 16 kernel UDP sources in namespace a (ports
# FIRST_PORT..+15), 4 datagrams each, to b's port 7870.
rp_send() {
	in_a /usr/bin/python3 -c '
import socket, sys, time
a, first = sys.argv[1], int(sys.argv[2])
srcs = []
for i in range(16):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("", first + i))
    srcs.append(s)
for n in range(4):
    for s in srcs:
        s.sendto(b"seq %d" % n, (a, 7870))
    time.sleep(0.002)
' "$IP_B" "$1" || fail "the kernel senders failed"
}

# rp_connect N: N kernel clients in namespace a, each 4 KiB to b's port
# 7871 and back; prints "echoed K" (K byte for byte).
rp_connect() {
	in_a /usr/bin/python3 -c '
import socket, sys
a, n = sys.argv[1], int(sys.argv[2])
ok = 0
for i in range(n):
    blob = bytes((i * 7 + j) % 251 for j in range(4096))
    c = socket.create_connection((a, 7871), timeout=10)
    c.sendall(blob)
    got = b""
    while len(got) < len(blob):
        d = c.recv(65536)
        if not d:
            break
        got += d
    ok += got == blob
    c.close()
print("echoed", ok)
' "$IP_B" "$1"
}

# rp_wait_lines N FILE...: wait (10 s) until the files hold N "udp" lines
# together.
rp_wait_lines() {
	local want=$1 i n
	shift
	for ((i = 0; i < 200; i++)); do
		n=$(cat "$@" | grep -c '^udp ')
		((n >= want)) && return 0
		sleep 0.05
	done
	fail "$n of $want datagrams arrived"
}

t_unet_run_reuseport_procs() {
	local run_env=() san=() pids=() p tool=$ROOT/tests/tools/reuseport-member.py out wd i n
	T_MODE=${T_MODE:-native} # the group is the same in both XDP modes
	setup_ns
	attach b
	start_unetd "user 0 kinds emulated tags 1-100 udp 7000-7999
user 65534 kinds emulated tags 1-100 udp 7000-7999"
	# shellcheck disable=SC2207
	san=($(unet_run_env))
	run_env=(env "${san[@]}" UNET_PIN_ROOT="$UNET_PIN_ROOT" UNET_DAEMON_SOCKET="$UNETD_SOCK")
	# nobody's logs: not in the test's 0700 directory.
	wd=$(mktemp -d /tmp/unet-rp-nobody.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$wd'")
	chmod 777 "$wd"
	# The tool where user nobody can read it (a clone's tree may be 0700).
	cp "$tool" "$wd/" && chmod 644 "$wd/reuseport-member.py" || fail "copy the tool"
	tool=$wd/reuseport-member.py
	as_user_cmd 65534
	# The daemon's endpoint takes the device's queue with its first
	# client, and lets it go with its last: while nobody's member on
	# other ports lives, every process's endpoint is an emulated one.
	"${AS[@]}" "${san[@]}" "$BUILD/unet-run" --iface "$IF_B" \
		/usr/bin/python3 "$tool" member "$IP_B" 7875 7876 >"$T_DIR/keep.out" 2>&1 &
	_UNET_BG_PIDS+=("$!")
	wait_ready "$T_DIR/keep.out" "$!" >/dev/null
	# nobody's group port is nobody's to the kernel too: a kernel server
	# of root's that starts later with SO_REUSEPORT is refused, as if
	# nobody had bound the port itself (before, it shared the port, and
	# every one of its connections went to nobody's process).
	out=$(in_b /usr/bin/python3 -c '
import errno, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
try:
    s.bind((sys.argv[1], 7876)); s.listen(4); print("bound")
except OSError as e:
    print("EADDRINUSE" if e.errno == errno.EADDRINUSE else e)
' "$IP_B" 2>&1)
	[[ $out == EADDRINUSE ]] || fail "root's kernel SO_REUSEPORT server beside nobody's group: $out"
	for p in 1 2; do
		unet_bg_b "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$T_DIR/m$p.log" \
			/usr/bin/python3 "$tool" member "$IP_B" 7870 7871 >"$T_DIR/m$p.out" 2>&1
		pids[p]=$UNET_BG_PID
		wait_ready "$T_DIR/m$p.out" "${pids[p]}" >/dev/null
		grep -q "udp bind $IP_B:7870: U-Net (endpoint [0-9]* on $IF_B (emulated by unetd)" "$T_DIR/m$p.log" ||
			{ cat "$T_DIR/m$p.log" "$T_DIR/unetd.log"; fail "process $p's UDP socket is not on U-Net"; }
		grep -q "tcp listen $IP_B:7871: U-Net" "$T_DIR/m$p.log" ||
			{ cat "$T_DIR/m$p.log"; fail "process $p's listener is not on U-Net"; }
	done

	# Datagrams: each exactly once, each source's on one process.
	rp_send 7880
	rp_wait_lines 64 "$T_DIR/m1.out" "$T_DIR/m2.out"
	/usr/bin/python3 - "$T_DIR/m1.out" "$T_DIR/m2.out" <<'PY' || fail "the datagrams were not each delivered once, a source's to one process"
import sys
seen, owner, counts = {}, {}, []
for k, f in enumerate(sys.argv[1:]):
    n = 0
    for line in open(f):
        w = line.split()
        if w[0] != "udp":
            continue
        key = (int(w[1]), int(w[2]))
        seen[key] = seen.get(key, 0) + 1
        if owner.setdefault(key[0], k) != k:
            sys.exit("source %d split over both" % key[0])
        n += 1
    counts.append(n)
print("udp counts", *counts)
want = {(p, s) for p in range(7880, 7896) for s in range(4)}
if set(seen) != want or any(v != 1 for v in seen.values()):
    sys.exit("lost or duplicated: %d distinct of 64" % len(seen))
if min(counts) == 0:
    sys.exit("one process got none")
PY

	# Connections: spread, each echoed.
	out=$(rp_connect 12) || fail "the kernel clients failed: $out"
	[[ $out == "echoed 12" ]] || fail "not every connection echoed: $out"
	(($(grep -c '^tcp ' "$T_DIR/m1.out") > 0 && $(grep -c '^tcp ' "$T_DIR/m2.out") > 0)) ||
		fail "the connections did not spread over both processes"
	note "tcp: $(grep -c '^tcp ' "$T_DIR/m1.out") and $(grep -c '^tcp ' "$T_DIR/m2.out") connections"

	# Another user may not join root's group; nor a socket without
	# SO_REUSEPORT (both as the kernel answers: EADDRINUSE).
	"${AS[@]}" "${san[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$wd/intruder.log" \
		/usr/bin/python3 "$tool" try "$IP_B" 7870 7871 1 >"$T_DIR/intruder.out" 2>&1
	cat "$T_DIR/intruder.out"
	grep -qx "udp bind EADDRINUSE" "$T_DIR/intruder.out" || fail "nobody's UDP socket got root's port"
	grep -qx "tcp listen EADDRINUSE" "$T_DIR/intruder.out" || fail "nobody's listener got root's port"
	# (the group's kernel socket is root's: the kernel itself refuses
	# nobody's, before unetd's own check of the group's user)
	grep -q "tcp listen $IP_B:7871: kernel (the TCP layer refused: Address already in use)" \
		"$wd/intruder.log" || { cat "$wd/intruder.log" "$T_DIR/unetd.log"; fail "nobody's join was not refused on U-Net"; }

	# Nor may nobody make a group beside a kernel server of root's with
	# SO_REUSEPORT (the daemon's own socket would join the kernel's
	# group, and the XDP program hand the server's connections over).
	unet_bg_b /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind((sys.argv[1], 7877))
s.listen(8)
print("ready endpoint=0", flush=True)
time.sleep(60)
' "$IP_B" >"$T_DIR/kserver.out" 2>&1
	wait_ready "$T_DIR/kserver.out" "$UNET_BG_PID" >/dev/null
	"${AS[@]}" "${san[@]}" "$BUILD/unet-run" --iface "$IF_B" \
		/usr/bin/python3 "$tool" try "$IP_B" 7878 7877 1 >"$T_DIR/beside.out" 2>&1
	grep -qx "tcp listen EADDRINUSE" "$T_DIR/beside.out" ||
		{ cat "$T_DIR/beside.out"; fail "nobody's listener took the port of root's kernel server"; }
	# root's own listener there is the kernel's, sharing with the server
	# as the kernel would, not U-Net's taking all its connections.
	"${run_env[@]}" ip netns exec "$NS_B" "$BUILD/unet-run" --iface "$IF_B" --log "$T_DIR/beside.log" \
		/usr/bin/python3 "$tool" try "$IP_B" 7878 7877 1 >"$T_DIR/beside-root.out" 2>&1
	grep -q "tcp listen $IP_B:7877: kernel" "$T_DIR/beside.log" ||
		{ cat "$T_DIR/beside.log"; fail "root's listener beside root's kernel server went on U-Net"; }
	kill "$UNET_BG_PID"
	"${run_env[@]}" ip netns exec "$NS_B" "$BUILD/unet-run" --iface "$IF_B" \
		/usr/bin/python3 "$tool" try "$IP_B" 7870 7871 0 >"$T_DIR/plain.out" 2>&1
	if ! grep -qx "udp bind EADDRINUSE" "$T_DIR/plain.out" ||
		! grep -qx "tcp listen EADDRINUSE" "$T_DIR/plain.out"; then
		cat "$T_DIR/plain.out"
		fail "a socket without SO_REUSEPORT was not refused"
	fi

	# One member dies: the other gets everything after.
	kill -KILL "${pids[1]}"
	unet_bg_wait "${pids[1]}" 5 >/dev/null 2>&1
	local before
	before=$(grep -c '^udp ' "$T_DIR/m2.out")
	rp_send 7900
	for ((i = 0; i < 200; i++)); do
		(($(grep -c '^udp ' "$T_DIR/m2.out") - before >= 64)) && break
		sleep 0.05
	done
	(($(grep -c '^udp ' "$T_DIR/m2.out") - before == 64)) ||
		fail "after process 1 died process 2 got $(($(grep -c '^udp ' "$T_DIR/m2.out") - before)) of 64 datagrams"
	before=$(grep -c '^tcp ' "$T_DIR/m2.out")
	out=$(rp_connect 4) || fail "the kernel clients failed after the kill: $out"
	[[ $out == "echoed 4" ]] || fail "after process 1 died: $out"
	(($(grep -c '^tcp ' "$T_DIR/m2.out") - before == 4)) || fail "process 2 did not serve every connection after the kill"
	note "after the kill: process 2 got 64 of 64 datagrams, 4 of 4 connections"

	# A user's group ports through unetd are bounded (the interface's
	# group table is smaller than its port tables): nobody holds 2 (its
	# member above), so 62 more of 70 go on U-Net.
	"${AS[@]}" "${san[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$wd/quota.log" \
		/usr/bin/python3 -c '
import socket, sys
keep = []
for p in range(7300, 7370):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind((sys.argv[1], p))
    keep.append(s)
' "$IP_B" >"$T_DIR/quota.out" 2>&1 || { cat "$T_DIR/quota.out"; fail "nobody's 70 sockets"; }
	n=$(grep -c "udp bind $IP_B:73[0-9][0-9]: U-Net" "$wd/quota.log")
	((n == 62)) || { tail -5 "$wd/quota.log"; fail "$n of nobody's group ports on U-Net, want 62"; }
	grep -q "user 65534 holds 64 SO_REUSEPORT group ports" "$T_DIR/unetd.log" ||
		grep -q "Disk quota exceeded" "$wd/quota.log" || { tail -3 "$wd/quota.log"; fail "no quota refusal"; }
}
