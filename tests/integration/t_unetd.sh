# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetd.sh - unetd: endpoints for unprivileged processes (emulated
# endpoints served through shared memory), the checks on what they send,
# the daemon's socket against hostile clients.  Sourced by run.sh (see
# lib.sh for the helpers).  The daemon runs in namespace b; the clients in
# b run as user nobody (65534); their peers in a are root's own endpoints.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetd_emulated|xdp|120|user nobody runs examples/pingpong and examples/stream unchanged over emulated endpoints served by unetd, and unet-peer sizes byte for byte; a user the policy does not name gets EACCES and the daemon's reason"
	"unetd_forge|xdp|90|from an emulated endpoint with 4096-byte frames: a foreign tag, a foreign peer MAC and tag, a raw IPv4 frame, overrunning headers and descriptors, a message longer than the daemon's 2048-byte buffers (refused as a descriptor error before any copy): only the two honest messages reach the wire (the peer's XDP counters), the daemon counts each refusal"
	"unetd_many|-|180|eight unprivileged processes with emulated endpoints on one single-queue interface talk to eight channels at once: each gets every size of its own messages back, byte for byte"
	"unetd_lifecycle|-|90|a SIGKILLed client's endpoint and tag are freed at once; the endpoint quota gives EDQUOT; a killed daemon makes the client's next call fail with ECONNRESET, and a restarted one serves again"
	"unetd_direct|xdp|90|a direct-access grant to user nobody (the daemon's queue set aside with --grant-queues): pingpong and every size byte for byte at a direct endpoint's speed; the granted socket cannot be rebound, given another segment or resized; a grant past the client's locked-memory limit is refused; emulated endpoints are refused where every queue is granted"
	"unetd_netns|xdp|90|one daemon (in namespace b) serves endpoints in two network namespaces: nobody's pingpong server in a and client in b, both emulated, every message back"
	"unetd_udp|xdp|150|UDP/IPv4 over U-Net as user nobody, on an emulated endpoint and on a direct grant: every size 1..1472 byte for byte both ways with the kernel's UDP in namespace a; a port the policy does not grant is refused; an emulated endpoint cannot send from a port or address it did not open"
	"unetd_uam|-|90|Active Messages (examples/kv) unchanged on an emulated endpoint of user nobody, at 10% injected loss, against a root server"
	"unetd_wait|xdp|90|adaptive wait on an emulated endpoint (user nobody): with a spin budget its waits take the replies unetd brings while spinning, never sleeping; with none every wait sleeps (unet-bench pingpong's wait counters)"
	"unetd_fuzz|-|150|10000 seeded hostile requests on the daemon's socket (as nobody and as root) while an honest client keeps pinging: the daemon keeps serving; a user's connections are bounded; a quarter are well-formed IPv4 and IPv6 routable channel opens with hostile fields, each answered: another's or a closed endpoint, tag 0, an ungranted or open tag, a held source port, a peer that is not an answering neighbour (none, loopback, multicast, broadcast, our own, IPv4-mapped, silent), past the quota refused, a non-zero pad refused with EINVAL; an opened one carries its tag's held port, an own address and the peer asked for"
)

# start_unetd POLICY_TEXT [UNETD_OPTION...]: unetd in namespace b, its socket and policy in
# a fresh root-owned 0755 directory (so that nobody can reach the socket
# and the daemon accepts the policy).  Sets UNETD_SOCK and UNETD_PID.
start_unetd() {
	local d i
	if [[ -z ${UNETD_DIR:-} ]]; then
		UNETD_DIR=$(mktemp -d /tmp/unetd-t.XXXXXX) || fail "mktemp"
		chmod 755 "$UNETD_DIR"
		T_CLEANUP+=("rm -rf '$UNETD_DIR'")
	fi
	d=$UNETD_DIR
	printf '%s\n' "$1" >"$d/policy"
	chmod 644 "$d/policy"
	UNETD_SOCK=$d/unetd.sock
	shift
	# The log is appended to across restarts, and a daemon killed with
	# SIGKILL leaves its socket file: wait for one more "ready" than
	# there was, not for any.
	local before
	before=$(grep -c 'unetd: info: ready' "$T_DIR/unetd.log" 2>/dev/null)
	unet_bg_b "$BUILD/unetd" --foreground --socket "$UNETD_SOCK" --policy "$d/policy" \
		--pin-root "$UNET_PIN_ROOT" "$@" >>"$T_DIR/unetd.log" 2>&1
	UNETD_PID=$UNET_BG_PID
	for ((i = 0; i < 100; i++)); do
		(($(grep -c 'unetd: info: ready' "$T_DIR/unetd.log") > ${before:-0})) &&
			[[ -S $UNETD_SOCK ]] && return 0
		kill -0 "$UNETD_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T_DIR/unetd.log"
	fail "unetd did not start"
}

# stop_unetd: stop the daemon with SIGTERM as an administrator would; it
# must exit 0 with nothing from the sanitizers in its log (under ASan a
# leak or an error makes the exit status non-zero).
stop_unetd() {
	local rc
	kill -TERM "$UNETD_PID" 2>/dev/null
	unet_bg_wait "$UNETD_PID" 10
	rc=$?
	if ((rc != 0)) || grep -qE 'Sanitizer|runtime error' "$T_DIR/unetd.log"; then
		tail -40 "$T_DIR/unetd.log"
		fail "unetd exited $rc (or its sanitizers spoke) when stopped"
	fi
}

# as_user UID CMD...: CMD in namespace b as UID (no groups, no
# capabilities), pointed at the test's daemon.  Every step execs the
# next, so "as_user_cmd UID; "${AS[@]}" CMD &" leaves CMD's own pid in $!
# (a signal must reach it, not a shell around it).
as_user_cmd() {
	AS=(ip netns exec "$NS_B" setpriv --reuid="$1" --regid="$1" --clear-groups
		env UNET_DAEMON_SOCKET="$UNETD_SOCK")
}
as_user() {
	local AS
	as_user_cmd "$1"
	shift
	"${AS[@]}" "$@"
}
as_nobody() { as_user 65534 "$@"; }

# wait_line LOG REGEX PID: wait (5 s) until LOG has a line matching REGEX.
wait_line() {
	local log=$1 re=$2 pid=$3 i
	for ((i = 0; i < 100; i++)); do
		grep -qE "$re" "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$log"
	fail "no line /$re/ in $log"
}

# wait_lines LOG RE N: until LOG has N lines matching the basic regular
# expression RE, 5 s at most; no verdict (the caller's check of LOG
# follows, and says what is missing).
wait_lines() {
	local i
	for ((i = 0; i < 100; i++)); do
		(($(grep -c "$2" "$1") >= $3)) && return 0
		sleep 0.05
	done
	return 0
}

# pp_server COUNT MODE TIMEOUT: examples/pingpong's server (root's own
# endpoint) in namespace a, tag 1 for b's tag 2, COUNT round trips (0: no
# limit), --MODE; waits until it listens.  Its pid in PP_SERVER.
pp_server() {
	unet_bg_a "$BUILD/examples/pingpong" server "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--count "$1" --"$2" --timeout "$3" >"$T_DIR/pp-server.log" 2>&1
	PP_SERVER=$UNET_BG_PID
	wait_line "$T_DIR/pp-server.log" 'server on' "$PP_SERVER"
}

# The XDP counter NAME of namespace a's interface.
stat_a() {
	in_a "$UNETCTL" --json stats "$IF_A" | jq -r --arg k "$1" '[.. | objects | .[$k]? | numbers] | first // 0'
}

t_unetd_emulated() {
	local s rc out
	setup_ns
	attach a
	start_unetd "user 65534 kinds emulated tags 1-100
group 65530 kinds emulated tags 1-100"

	# examples/pingpong, unchanged: the client is nobody's, so the
	# library asks unetd for an emulated endpoint on its own.
	pp_server 2000 block 60
	s=$PP_SERVER
	as_nobody timeout 60 "$BUILD/examples/pingpong" client "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count 2000 --block --timeout 50 >"$T_DIR/pp-client.log" 2>&1
	rc=$?
	cat "$T_DIR/pp-client.log"
	((rc == 0)) || fail "pingpong client as nobody exited $rc"
	grep -q '^rtt_us .*lost=0 ' "$T_DIR/pp-client.log" || fail "pingpong over the emulated endpoint lost messages"
	unet_bg_wait "$s" 10 || fail "pingpong server failed"

	# examples/stream, unchanged: nobody receives.
	as_nobody timeout 60 "$BUILD/examples/stream" recv "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --timeout 40 >"$T_DIR/st-recv.log" 2>&1 &
	s=$!
	_UNET_BG_PIDS+=("$s")
	wait_line "$T_DIR/st-recv.log" 'receiving' "$s"
	in_a timeout 60 "$BUILD/examples/stream" send "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--count 20000 --size 1000 --timeout 30 >"$T_DIR/st-send.log" 2>&1 || fail "stream sender failed"
	unet_bg_wait "$s" 40 || { cat "$T_DIR/st-recv.log"; fail "stream receiver as nobody failed"; }
	cat "$T_DIR/st-recv.log"
	grep -q '^bw msgs=' "$T_DIR/st-recv.log" || fail "no bandwidth line from the stream receiver"

	# Every size, byte for byte, both ways.
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$s" >/dev/null
	as_nobody "$PEER" sizes "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 --timeout 40 \
		>"$T_DIR/sizes.log" 2>&1 || { cat "$T_DIR/sizes.log"; fail "unet-peer sizes as nobody failed"; }
	tail -2 "$T_DIR/sizes.log"
	kill "$s" 2>/dev/null

	# A user the policy does not name.
	out=$(as_user 65533 "$BUILD/examples/pingpong" client "$IF_B" --tag 3 --peer "$MAC_A" \
		--peer-tag 1 --count 1 --timeout 5 2>&1)
	rc=$?
	echo "uid 65533: rc=$rc: $out"
	((rc != 0)) || fail "a user without a grant got an endpoint"
	grep -q 'may not use' <<<"$out" || fail "the refusal does not give the daemon's reason: $out"
	grep -qi 'permission denied' <<<"$out" || fail "the refusal is not EACCES: $out"

	# A group rule matches the primary group too (no supplementary ones).
	out=$(in_b setpriv --reuid=65531 --regid=65530 --clear-groups env UNET_DAEMON_SOCKET="$UNETD_SOCK" \
		"$BUILD/tools/unet-forge" "$IF_B" --tag 7 --peer "$MAC_A" --peer-tag 1 \
		--other-mac 02:00:00:00:00:99 2>&1)
	echo "uid 65531 gid 65530: $out"
	grep -q '^forge ' <<<"$out" || fail "a group rule did not match the client's primary group: $out"
	stop_unetd
}

t_unetd_forge() {
	local s before after
	setup_ns
	attach a
	in_a sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
	in_b sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
	start_unetd "user 65534 kinds emulated tags 1-100"
	unet_bg_a "$PEER" hold "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --timeout 20 \
		--expect 2 >"$T_DIR/hold.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/hold.log" "$s" >/dev/null
	before=$(stat_a rx)
	as_nobody "$BUILD/tools/unet-forge" "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--other-mac 02:00:00:00:00:99 >"$T_DIR/forge.log" 2>&1
	local rc=$?
	cat "$T_DIR/forge.log"
	((rc == 0)) || fail "the daemon did not refuse and count each forged frame as it must"
	sleep 0.3
	after=$(stat_a rx)
	note "frames that reached $IF_A's program: $((after - before))"
	((after - before == 2)) || fail "$((after - before)) frames reached the peer, want the 2 honest ones"
	kill -INT "$s" 2>/dev/null
	unet_bg_wait "$s" 10
	cat "$T_DIR/hold.log"
	grep -q 'received=2 foreign=0' "$T_DIR/hold.log" || fail "the peer did not get exactly the 2 honest messages"
	stop_unetd
}

t_unetd_many() {
	T_MODE=${T_MODE:-skb}
	local s i chans=() pids=() rc=0
	setup_ns
	attach a
	start_unetd "user 65534 kinds emulated tags 1-100 endpoints 8"
	for ((i = 0; i < 8; i++)); do
		chans+=(--tag $((10 + i)) --peer "$MAC_B" --peer-tag $((20 + i)))
	done
	unet_bg_a "$PEER" echo "$IF_A" "${chans[@]}" --timeout 120 >"$T_DIR/echo.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$s" >/dev/null
	for ((i = 0; i < 8; i++)); do
		as_nobody "$PEER" sizes "$IF_B" --tag $((20 + i)) --peer "$MAC_A" --peer-tag $((10 + i)) \
			--max-size 600 --timeout 90 >"$T_DIR/sizes-$i.log" 2>&1 &
		pids+=($!)
		_UNET_BG_PIDS+=($!)
	done
	for ((i = 0; i < 8; i++)); do
		if ! wait "${pids[$i]}"; then
			echo "--- client $i:"
			cat "$T_DIR/sizes-$i.log"
			rc=1
		fi
	done
	tail -n1 "$T_DIR"/sizes-*.log
	((rc == 0)) || fail "not every one of the 8 emulated clients got all its messages back"
	kill "$s" 2>/dev/null
	stop_unetd
}

t_unetd_lifecycle() {
	T_MODE=${T_MODE:-skb}
	local h out rc
	setup_ns
	attach a
	start_unetd "user 65534 kinds emulated tags 1-100 endpoints 1"

	# SIGKILL: the daemon frees the endpoint and the tag at once.
	local AS
	as_user_cmd 65534
	"${AS[@]}" "$PEER" hold "$IF_B" --tag 5 --peer "$MAC_A" --peer-tag 6 --timeout 30 \
		>"$T_DIR/h1.log" 2>&1 &
	h=$!
	_UNET_BG_PIDS+=("$h")
	wait_ready "$T_DIR/h1.log" "$h" >/dev/null
	# The quota: one endpoint for nobody.
	out=$(as_nobody "$PEER" hold "$IF_B" --tag 7 --peer "$MAC_A" --peer-tag 6 --timeout 2 2>&1)
	echo "second endpoint: $out"
	grep -qi 'quota' <<<"$out" || fail "a second endpoint past the quota was not refused with the quota: $out"
	kill -KILL "$h"
	wait "$h" 2>/dev/null
	"${AS[@]}" "$PEER" hold "$IF_B" --tag 5 --peer "$MAC_A" --peer-tag 6 --timeout 30 \
		>"$T_DIR/h2.log" 2>&1 &
	h=$!
	_UNET_BG_PIDS+=("$h")
	wait_ready "$T_DIR/h2.log" "$h" >/dev/null || fail "tag 5 not free again after its owner was killed"
	kill -KILL "$h"
	wait "$h" 2>/dev/null

	# The daemon goes: a client blocked in its calls hears of it.
	pp_server 0 block 30
	local srv=$PP_SERVER
	as_nobody "$BUILD/examples/pingpong" client "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--count 2000000 --block --timeout 20 >"$T_DIR/pp-client.log" 2>&1 &
	h=$!
	_UNET_BG_PIDS+=("$h")
	sleep 1
	kill -KILL "$UNETD_PID"
	wait "$UNETD_PID" 2>/dev/null
	unet_bg_wait "$h" 10
	rc=$?
	cat "$T_DIR/pp-client.log"
	((rc != 0 && rc != 124)) || fail "the client did not stop with an error when the daemon died (rc $rc)"
	grep -qi 'connection reset' "$T_DIR/pp-client.log" || fail "the client's error is not ECONNRESET"

	# Restarted: it serves again.
	start_unetd "user 65534 kinds emulated tags 1-100 endpoints 1"
	as_nobody timeout 30 "$BUILD/examples/pingpong" client "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count 200 --block --timeout 20 >"$T_DIR/pp-client2.log" 2>&1 ||
		{ cat "$T_DIR/pp-client2.log"; fail "no service after the daemon restarted"; }
	kill "$srv" 2>/dev/null
	stop_unetd
}

t_unetd_fuzz() {
	T_MODE=${T_MODE:-skb}
	local s c rc out ll_a peers
	setup_ns
	attach a
	# The channel fuzz's honest peers: a's addresses of both families
	# (its link-local one too); every other peer it names must be refused.
	unetd_chan6_link
	ll_a=$(in_a ip -6 -o addr show dev "$IF_A" scope link | awk '{ sub("/.*", "", $4); print $4; exit }')
	[[ -n $ll_a ]] || fail "a has no link-local IPv6 address"
	peers=(--peer "$IP_A" --peer "$UNETD_CHAN6_A" --peer "$ll_a")
	# root too, so that its fuzz reaches channels on every tag (sharing
	# a source port 16384 apart), within bounds of its own.
	start_unetd "user 65534 kinds emulated tags 1-100 endpoints 4 channels 8
user root all endpoints 4 segment 64M"
	pp_server 0 block 100
	s=$PP_SERVER
	as_nobody timeout 100 "$BUILD/examples/pingpong" client "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count 20000 --block --timeout 90 >"$T_DIR/pp-client.log" 2>&1 &
	c=$!
	_UNET_BG_PIDS+=("$c")
	as_nobody "$BUILD/tools/unetd-fuzz" --socket "$UNETD_SOCK" --iface "$IF_B" --count 5000 \
		--seed 0x5eed --seconds 40 "${peers[@]}" --tags 1-100 --channels 8 ||
		fail "the daemon stopped serving, or a channel check failed, under nobody's fuzz"
	in_b "$BUILD/tools/unetd-fuzz" --socket "$UNETD_SOCK" --iface "$IF_B" --count 5000 \
		--seed 0x5eee --seconds 40 "${peers[@]}" ||
		fail "the daemon stopped serving, or a channel check failed, under root's fuzz"
	kill -0 "$UNETD_PID" 2>/dev/null || fail "the daemon died"
	wait "$c"
	rc=$?
	# Connections are bounded per user: 300 at once, 256 served.
	out=$(as_nobody "$BUILD/tools/unetd-fuzz" --socket "$UNETD_SOCK" --hold 300)
	echo "$out"
	[[ $out == "hold served=256 of 300" ]] || fail "nobody's connections not bounded at 256: $out"
	cat "$T_DIR/pp-client.log"
	((rc == 0)) || fail "the honest client failed while the daemon was fuzzed (rc $rc)"
	grep -q 'lost=0 ' "$T_DIR/pp-client.log" || fail "the honest client lost messages during the fuzz"
	kill "$s" 2>/dev/null
	stop_unetd
}

t_unetd_direct() {
	local s rc out
	setup_ns
	attach a
	# The only queue of b's device is set aside for grants: the daemon
	# keeps none for itself.
	start_unetd "user 65534 kinds emulated,direct tags 1-100" --grant-queues 0x1
	pp_server 5000 spin 60
	s=$PP_SERVER
	as_nobody timeout 60 "$BUILD/examples/pingpong" client "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count 5000 --spin --timeout 50 >"$T_DIR/pp-client.log" 2>&1
	rc=$?
	cat "$T_DIR/pp-client.log"
	((rc == 0)) || fail "pingpong as nobody over a granted endpoint exited $rc"
	grep -q 'lost=0 ' "$T_DIR/pp-client.log" || fail "the granted endpoint lost messages"
	grep -q 'direct endpoint .* for uid 65534' "$T_DIR/unetd.log" || fail "the daemon did not log a direct grant"
	unet_bg_wait "$s" 10 || fail "pingpong server failed"

	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	s=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$s" >/dev/null
	as_nobody "$PEER" sizes "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 --timeout 40 \
		>"$T_DIR/sizes.log" 2>&1 || { cat "$T_DIR/sizes.log"; fail "unet-peer sizes over a grant failed"; }
	kill "$s" 2>/dev/null

	as_nobody "$BUILD/tools/unet-grant-probe" "$IF_B" >"$T_DIR/probe.log" 2>&1
	rc=$?
	cat "$T_DIR/probe.log"
	grep -q '^kind=direct' "$T_DIR/probe.log" || fail "the probe did not get a direct endpoint"
	((rc == 0)) || fail "a granted socket let its client reach beyond its grant"

	# A granted segment is locked memory: the client's limit holds.
	out=$(as_nobody prlimit --memlock=65536:65536 "$BUILD/tools/unet-grant-probe" "$IF_B" 2>&1)
	echo "with a 64 KiB memlock limit: $out"
	grep -q 'locked-memory limit' <<<"$out" || fail "a grant past the locked-memory limit was not refused clearly"

	out=$(as_user 65534 env UNET_DAEMON_SOCKET="$UNETD_SOCK" "$BUILD/tools/unet-forge" "$IF_B" \
		--tag 3 --peer "$MAC_A" --peer-tag 1 --other-mac 02:00:00:00:00:99 2>&1)
	echo "emulated where every queue is granted: $out"
	grep -q 'set aside for direct grants' <<<"$out" || fail "an emulated endpoint was not refused clearly"
	stop_unetd
}

t_unetd_uam() {
	local s i rc
	T_MODE=skb
	setup_ns
	attach a
	attach b
	ctl_a fault "$IF_A" --drop-ppm 100000 || fail "unetctl fault $IF_A failed"
	ctl_b fault "$IF_B" --drop-ppm 100000 || fail "unetctl fault $IF_B failed"
	start_unetd "user 65534 kinds emulated tags 1-100"
	unet_bg_a "$BUILD/examples/kv" server "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--seconds 60 >"$T_DIR/server.log" 2>&1
	s=$UNET_BG_PID
	wait_line "$T_DIR/server.log" '^ready' "$s"
	as_nobody timeout 60 "$BUILD/examples/kv" client "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count 2000 >"$T_DIR/client.log" 2>&1
	rc=$?
	cat "$T_DIR/client.log"
	((rc == 0)) || fail "kv client as nobody exited with $rc"
	grep -q '^kv ok puts=2000 gets=2000' "$T_DIR/client.log" || fail "kv client did not verify 2000 puts"
	grep -q 'emulated endpoint' "$T_DIR/unetd.log" || fail "the client did not get an emulated endpoint"
	stop "$s" "$T_DIR/server.log" "kv server"
	stop_unetd
}

t_unetd_netns() {
	local s rc
	setup_ns
	attach a
	attach b
	start_unetd "user 65534 kinds emulated tags 1-100"
	# The server is in namespace a: its library sends the daemon (in b)
	# its own namespace, and the daemon sets up a's device there.
	ip netns exec "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
		env UNET_DAEMON_SOCKET="$UNETD_SOCK" "$BUILD/examples/pingpong" server "$IF_A" \
		--tag 1 --peer "$MAC_B" --peer-tag 2 --count 2000 --block --timeout 60 \
		>"$T_DIR/pp-server.log" 2>&1 &
	s=$!
	_UNET_BG_PIDS+=("$s")
	wait_line "$T_DIR/pp-server.log" 'server on' "$s"
	as_nobody timeout 60 "$BUILD/examples/pingpong" client "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count 2000 --block --timeout 50 >"$T_DIR/pp-client.log" 2>&1
	rc=$?
	cat "$T_DIR/pp-client.log"
	((rc == 0)) || fail "pingpong client exited $rc"
	grep -q 'lost=0 ' "$T_DIR/pp-client.log" || fail "messages lost between the two namespaces"
	unet_bg_wait "$s" 10 || fail "pingpong server in namespace a failed"
	grep -q "$IF_A: serving .*in the client's network namespace" "$T_DIR/unetd.log" ||
		fail "the daemon did not serve $IF_A in namespace a"
	stop_unetd
}

# udp_round KIND: nobody's U-Net UDP in b <-> kernel UDP in a, every size
# both ways (the daemon already running).
udp_round() {
	local kind=$1 pid
	as_user_cmd 65534
	"${AS[@]}" "$UUDP" echo "$IF_B" --local "$IP_B:7000" --timeout 100 \
		>"$T_DIR/uecho-$kind.log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$T_DIR/uecho-$kind.log" "$pid" >/dev/null
	in_a "$KUDP" sizes --local "$IP_A:7001" --remote "$IP_B:7000" --max 1472 --timeout 90 \
		>"$T_DIR/ksizes-$kind.log" 2>&1
	cat "$T_DIR/ksizes-$kind.log"
	grep -qx "sizes ok 1..1472" "$T_DIR/ksizes-$kind.log" ||
		fail "kernel client -> nobody's UDP echo ($kind) failed"
	stop "$pid" "$T_DIR/uecho-$kind.log" "U-Net echo ($kind)"
	unet_bg_a "$KUDP" echo --local "$IP_A:7100" --timeout 100 >"$T_DIR/kecho-$kind.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho-$kind.log" "$pid" >/dev/null
	as_nobody "$UUDP" sizes "$IF_B" --local "$IP_B:7101" --remote "$IP_A:7100" --max 1472 \
		--timeout 90 >"$T_DIR/usizes-$kind.log" 2>&1
	cat "$T_DIR/usizes-$kind.log"
	grep -qx "sizes ok 1..1472" "$T_DIR/usizes-$kind.log" ||
		fail "nobody's UDP client ($kind) -> kernel echo failed"
	stop "$pid" "$T_DIR/kecho-$kind.log" "kernel echo"
}

t_unetd_udp() {
	local out
	setup_ns
	attach a
	attach b
	in_a ethtool -K "$IF_A" tx off >/dev/null 2>&1
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	start_unetd "user 65534 kinds emulated tags 1-100 udp 7000-7200"
	udp_round emulated
	grep -q "emulated endpoint" "$T_DIR/unetd.log" || fail "the UDP client did not get an emulated endpoint"

	# A port outside the grant.
	out=$(as_nobody "$UUDP" echo "$IF_B" --local "$IP_B:9000" --timeout 2 2>&1)
	echo "port 9000: $out"
	grep -q 'UDP port 9000 not granted' <<<"$out" || fail "a port outside the policy was not refused clearly"

	# Sends from ports and addresses it did not open never leave.
	as_nobody "$BUILD/tools/unet-forge-udp" "$IF_B" --local "$IP_B:7150" --remote "$IP_A:7151" \
		>"$T_DIR/forge-udp.log" 2>&1 || { cat "$T_DIR/forge-udp.log"; fail "the daemon let a forged UDP or ARP frame go"; }
	cat "$T_DIR/forge-udp.log"
	stop_unetd

	# The same over a direct grant (the daemon keeps no queue for itself).
	UNETD_DIR=
	start_unetd "user 65534 kinds direct tags 1-100 udp 7000-7200" --grant-queues 0x1
	udp_round direct
	grep -q "direct endpoint" "$T_DIR/unetd.log" || fail "the UDP client did not get a direct grant"
	stop_unetd
}

# nobody's unet-bench pingpong on an emulated endpoint against root's echo
# in a (blocking, so it leaves a CPU to unetd), adaptive with a spin
# budget far above the round trip and then with none: its wait counters
# (lib/core/wait.c) say whether the replies were caught spinning.
t_unetd_wait() {
	local s j n=300 spin
	setup_ns
	attach a
	start_unetd "user 65534 kinds emulated tags 1-100"
	for spin in 500000 0; do
		unet_bg_a "$BUILD/unet-bench" echo --transport unet --iface "$IF_A" --tag 1 --peer "$MAC_B" \
			--peer-tag 2 --mode block --timeout 60 >"$T_DIR/echo-$spin.out" 2>"$T_DIR/echo-$spin.err"
		s=$UNET_BG_PID
		wait_line "$T_DIR/echo-$spin.err" ' ready$' "$s"
		as_nobody timeout 60 "$BUILD/unet-bench" pingpong --transport unet --iface "$IF_B" --tag 2 \
			--peer "$MAC_A" --peer-tag 1 --mode adaptive --spin-us "$spin" --size 64 --count "$n" \
			--warmup 10 --timeout 50 >"$T_DIR/pp-$spin.out" 2>"$T_DIR/pp-$spin.err" ||
			{ cat "$T_DIR/pp-$spin.err"; fail "pingpong as nobody (--spin-us $spin) failed"; }
		unet_bg_wait "$s" 10 || fail "echo failed"
		j=$(tail -n 1 "$T_DIR/pp-$spin.out")
		echo "spin $spin: $j"
		jq -e '.spin_us != null' <<<"$j" >/dev/null || fail "no wait counters in $j"
		if ((spin)); then
			# Every wait catches its reply spinning; the first (before
			# the echo answered at all) may sleep.  A reply that is
			# there before the pingpong waits (the daemon no longer
			# spins, but a slow client, under ASan, may find it
			# queued) needs no wait: some waits, not one per trip.
			jq -e '.waits >= 1 and .wait_sleeps <= 2 and .wait_spin_hits + .wait_sleeps == .waits' \
				<<<"$j" >/dev/null ||
				fail "with a 500 ms budget the emulated endpoint's waits did not catch the replies spinning: $j"
		else
			jq -e --argjson n "$n" '.wait_spin_hits == 0 and .wait_sleeps >= $n' <<<"$j" >/dev/null ||
				fail "with no budget the emulated endpoint's waits did not sleep: $j"
		fi
	done
	stop_unetd
}
