# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_unetd.sh - unmodified programs under unet-run as an
# unprivileged user, on the endpoints unetd serves (docs/unet-run.md):
# the same command as root's, no option differs.  Sourced by run.sh;
# uses t_unetd.sh's helpers (start_unetd, as_user_cmd) and
# t_unet_run_udp.sh's sockperf_check.  The daemon and nobody's servers
# are in namespace b, the kernel's clients in a.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_unetd_mcast|-|90|as user nobody through unetd (emulated endpoint), a Python receiver under unet-run joins two groups on one socket: the group the policy's addrs grants comes over U-Net (30 datagrams from a kernel sender, byte for byte, in order); the join of the other fails with the daemon's EACCES (logged), and none of that group's 30 datagrams reaches the socket"
	"unet_run_unetd|xdp|150|as user nobody through unetd (emulated endpoints): redis-server under unet-run answers redis-benchmark (50 clients, SET/GET/INCR) and redis-cli from the other namespace, the INCR counter exact, every connection on U-Net; sockperf's UDP server under unet-run answers a kernel ping-pong with nothing lost, duplicated or reordered, over U-Net"
)

t_unet_run_unetd() {
	command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
		skip "redis-server and redis-benchmark (redis-tools) are not installed"
	command -v sockperf >/dev/null || skip "sockperf is not installed"
	local run_env=() pid i n wd
	setup_ns
	attach b
	[[ $T_MODE == skb ]] && { in_a ethtool -K "$IF_A" tso off gso off >/dev/null 2>&1 || fail "ethtool -K $IF_A"; }
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7200"
	# nobody's working directory and logs: not the test's 0700 one.
	wd=$(mktemp -d /tmp/unet-run-nobody.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$wd'")
	chmod 777 "$wd"
	# shellcheck disable=SC2207
	run_env=($(unet_run_env))
	as_user_cmd 65534
	"${AS[@]}" "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$wd/redis.log" \
		redis-server --bind "$IP_B" --port 7010 --save "" --appendonly no --protected-mode no \
		--dir "$wd" >"$wd/redis.out" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	for ((i = 0; i < 200; i++)); do
		[[ $(in_a redis-cli -h "$IP_B" -p 7010 ping 2>/dev/null) == PONG ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	((i < 200)) && kill -0 "$pid" 2>/dev/null ||
		{ cat "$wd/redis.out" "$wd/redis.log" "$T_DIR/unetd.log"; fail "nobody's redis-server under unet-run does not answer"; }
	in_a redis-cli -h "$IP_B" -p 7010 set unet-run-key "nobody over U-Net" >/dev/null || fail "redis-cli set"
	[[ $(in_a redis-cli -h "$IP_B" -p 7010 get unet-run-key) == "nobody over U-Net" ]] ||
		fail "redis-cli get gave another value"
	in_a redis-benchmark -h "$IP_B" -p 7010 -c 50 -n 5000 -t set,get,incr -q >"$T_DIR/bench.out" 2>&1 ||
		{ cat "$T_DIR/bench.out"; fail "redis-benchmark failed"; }
	cat "$T_DIR/bench.out"
	n=$(tr '\r' '\n' <"$T_DIR/bench.out" | grep -cE '^ *(SET|GET|INCR): [0-9.]+ requests per second')
	((n == 3)) || fail "redis-benchmark finished $n of its 3 tests"
	[[ $(in_a redis-cli -h "$IP_B" -p 7010 get counter:__rand_int__) == 5000 ]] ||
		fail "INCR counter is not 5000: $(in_a redis-cli -h "$IP_B" -p 7010 get counter:__rand_int__)"
	kill -TERM "$pid"
	unet_bg_wait "$pid" 10
	cat "$wd/redis.log"
	grep -q "tcp listen $IP_B:7010: U-Net (endpoint [0-9]* on $IF_B (emulated by unetd)" "$wd/redis.log" ||
		fail "nobody's redis listener was not on an emulated endpoint"
	n=$(grep -c "tcp accepted on fd [0-9]* from $IP_A:[0-9]*: U-Net" "$wd/redis.log")
	((n >= 52)) || fail "only $n connections on U-Net (redis-cli's and the benchmark's 50)"
	grep -q ": kernel" "$wd/redis.log" && fail "a socket of nobody's redis went to the kernel"

	# sockperf's UDP server, as nobody, against a kernel client.  A
	# wake-up the daemon owes and does not pay leaves the server asleep
	# for its 10 ms slice each round trip: at most 100 in the second,
	# which sockperf_check refuses (it wants more than 100).
	as_user_cmd 65534
	"${AS[@]}" "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$wd/sr.log" \
		sockperf sr -i "$IP_B" -p 7020 >"$wd/sr.out" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_log 15 "$wd/sr.log" "udp bind $IP_B:7020: "
	in_a sockperf pp -i "$IP_B" -p 7020 -m 200 -t 1 >"$T_DIR/pp.out" 2>&1
	n=$(sockperf_check "$T_DIR/pp.out") || exit 1
	kill -INT "$pid"
	unet_bg_wait "$pid" 10
	cat "$wd/sr.log"
	grep -q "udp bind $IP_B:7020: U-Net (endpoint [0-9]* on $IF_B (emulated by unetd)" "$wd/sr.log" ||
		fail "nobody's sockperf server was not on an emulated endpoint"
	note "nobody's sockperf server under unet-run: $n round trips"
}

t_unet_run_unetd_mcast() {
	local run_env=() pid wd g1=239.7.9.1 g2=239.7.9.2
	T_MODE=${T_MODE:-native}
	setup_ns
	attach b
	start_unetd "user 65534 kinds emulated tags 1-10 udp 7970 addrs $g1"
	wd=$(mktemp -d /tmp/unet-run-nobody.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$wd'")
	chmod 777 "$wd"
	cat >"$wd/recv.py" <<'PY'
import errno, socket, sys
g1, g2 = sys.argv[1:3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 7970))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(g1) + socket.inet_aton("0.0.0.0"))
try:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(g2) + socket.inet_aton("0.0.0.0"))
    print(g2, "joined", flush=True)
except OSError as e:
    print(g2, errno.errorcode.get(e.errno, e.errno), flush=True)
s.settimeout(20)
print("ready endpoint=0", flush=True)
got = [s.recv(2048) for _ in range(30)]
print(g1, "in order" if got == [b"%s %d" % (g1.encode(), i) for i in range(30)] else "NOT as sent", flush=True)
s.settimeout(1)
try:
    print("then", s.recv(2048).decode(), flush=True)
except socket.timeout:
    print("then nothing", flush=True)
PY
	chmod 644 "$wd/recv.py"
	# shellcheck disable=SC2207
	run_env=($(unet_run_env))
	as_user_cmd 65534
	"${AS[@]}" "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$wd/recv.log" \
		/usr/bin/python3 "$wd/recv.py" "$g1" "$g2" >"$wd/recv.out" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$wd/recv.out" "$pid" >/dev/null
	in_a /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[1]))
for i in range(30):
    for g in sys.argv[2:]:
        s.sendto(b"%s %d" % (g.encode(), i), (g, 7970))
    time.sleep(0.002)
' "$IP_A" "$g1" "$g2" || fail "the sender failed"
	finish "$pid" "$wd/recv.out" 20 "nobody's multicast receiver"
	cat "$wd/recv.log"
	grep -qx "$g1 in order" "$wd/recv.out" || fail "the granted group's datagrams did not all arrive"
	grep -qx "then nothing" "$wd/recv.out" || fail "a datagram of the group the policy does not grant reached the socket"
	grep -qx "$g2 EACCES" "$wd/recv.out" || fail "the join of the group the policy does not grant was not refused (EACCES)"
	grep -q "udp join $g1 on $IF_B: U-Net (port 7970)" "$wd/recv.log" ||
		fail "the granted group was not joined on U-Net"
	grep -q "udp join $g2 on $IF_B: refused on U-Net: Permission denied" "$wd/recv.log" ||
		fail "the refusal was not logged"
}
