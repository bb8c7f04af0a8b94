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
