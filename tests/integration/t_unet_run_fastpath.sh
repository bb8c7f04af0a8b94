# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_fastpath.sh - what unet-run's hot paths must keep while they
# take shortcuts (docs/performance.md, "Unmodified programs under
# unet-run"): a writev leaves as the kernel's does, and epoll's readiness
# over many connections, read after one drive of the endpoint per wait,
# misses nothing and re-fires no one-shot.  Sourced by run.sh (see lib.sh
# for the helpers; tcp_run_setup is t_unet_run_tcp.sh's).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_fastpath|-|60|an epoll server answering with writev (tests/tools/fastpath-server.py), first on the kernel's sockets (the expectations are the kernel's), then under unet-run, against 24 kernel connections: level-triggered and one-shot registrations (re-armed with EPOLL_CTL_MOD; none fires while disarmed), at most 4 events per wait, replies of up to 100 000 bytes (more than the U-Net send buffer) written as pieces of 1..5000 bytes in one writev, byte for byte; and a 100-byte header with a 1000-byte body in one writev arrives in one segment, 50 times of 50, as from the kernel"
)

t_unet_run_fastpath() {
	local pid which srv=$ROOT/tests/tools/fastpath-server.py cli=$ROOT/tests/tools/fastpath-client.py
	T_MODE=${T_MODE:-native}
	tcp_run_setup
	for which in kernel unet; do
		local wrap=()
		[[ $which == unet ]] && wrap=("${RUN_ENV[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/server.log")
		unet_bg_a "${wrap[@]}" /usr/bin/python3 "$srv" "$IP_A" 7840 24 >"$T_DIR/server-$which.out" 2>&1
		pid=$UNET_BG_PID
		wait_ready "$T_DIR/server-$which.out" "$pid" >/dev/null
		in_b /usr/bin/python3 "$cli" "$IP_A" 7840 24 50 >"$T_DIR/client-$which.out" 2>&1 ||
			{ cat "$T_DIR/client-$which.out"; unet_bg_wait "$pid" 5; cat "$T_DIR/server-$which.out"; fail "the client against the $which server failed"; }
		finish "$pid" "$T_DIR/server-$which.out" 20 "the $which server"
		cat "$T_DIR/client-$which.out"
		grep -q '^ok served=122$' "$T_DIR/server-$which.out" || fail "the $which server did not serve 24 x 3 + 50 requests"
		grep -q '^segments 50 of 50 replies$' "$T_DIR/client-$which.out" ||
			fail "the $which server's header-and-body writevs did not come one segment each"
	done
	[[ $(grep -c "tcp accepted on fd [0-9]* from $IP_B:[0-9]*: U-Net" "$T_DIR/server.log") == 24 ]] ||
		{ cat "$T_DIR/server.log"; fail "not every connection was on U-Net"; }
}
