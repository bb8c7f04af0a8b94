# shellcheck shell=bash disable=SC2016,SC2153 # jq filters are single-quoted; UNET_BG_PID is netns.sh's
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetctl_daemon.sh - unetctl and unetd: `unetctl daemon status`, the
# kinds in `endpoint list` and `channel list`, `unetctl doctor`.  Sourced
# by run.sh (see lib.sh for the helpers); start_unetd, as_user and
# as_nobody come from t_unetd.sh (the same shell).  The daemon runs in
# namespace b; nobody (65534) holds an emulated endpoint there.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetctl_daemon_status|-|120|unetctl daemon status: no daemon is a one-line error naming the socket (--socket and \$UNET_DAEMON_SOCKET), exit 1; with nobody's emulated endpoint: pid, protocol 1, clients, the endpoint's uid 65534, pid, channels and counters (rx_delivered of 30 messages), req_denied after a refused user, in text and in --json with schema_version, as root and as nobody; after SIGKILL of the client: no endpoint, no client"
	"unetctl_endpoint_kinds|-|90|unetctl endpoint list and channel list with unetd: a root process's slot is kind direct, unetd's slot kind unetd (its pid, comm unetd), nobody's endpoint kind emulated with uid 65534, its pid and unetd's slot; nobody's channel kind emulated, root's direct; gone after the client is killed, unetd's slot with it (the daemon frees an interface with its last endpoint)"
	"unetctl_doctor|-|90|unetctl doctor IFACE: root gets direct (exit 0; euid ok, xdp skb, zero-copy warned for veth); nobody with a grant gets emulated (exit 0; says why not direct, the grant's rule and tags); a user without a grant gets exit 1, a policy fail with its fix and one stderr line; no daemon: exit 1 for nobody; WHOAMI counts no refusal; --help of the new commands"
)

# jq_is WHAT JSON [JQ_OPTIONS...] FILTER: FILTER (a jq boolean) holds
# for JSON, else fail.
jq_is() {
	local what=$1 json=$2
	shift 2
	jq -e "$@" >/dev/null <<<"$json" || fail "$what: jq ${*: -1} does not hold for: $json"
}

t_unetctl_daemon_status() {
	T_MODE=${T_MODE:-skb}
	local out h s e none=$T_DIR/none.sock
	setup_ns
	attach a

	# No daemon: one line naming the socket, exit 1, nothing on stdout.
	expect_err "no daemon (--socket)" "^unetctl: unetd not reachable at $none: No such file or directory" \
		ctl_b --socket "$none" daemon status
	expect_err "no daemon (\$UNET_DAEMON_SOCKET)" "^unetctl: unetd not reachable at $none:" \
		in_b env UNET_DAEMON_SOCKET="$none" "$UNETCTL" --json daemon status

	start_unetd "user 65534 kinds emulated tags 1-100"
	local AS
	as_user_cmd 65534
	"${AS[@]}" "$PEER" hold "$IF_B" --tag 5 --peer "$MAC_A" --peer-tag 6 --timeout 60 \
		>"$T_DIR/hold.log" 2>&1 &
	h=$!
	_UNET_BG_PIDS+=("$h")
	wait_ready "$T_DIR/hold.log" "$h" >/dev/null
	# 30 messages from a to nobody's tag 5: the daemon counts them.
	in_a "$PEER" send "$IF_A" --tag 6 --peer "$MAC_B" --peer-tag 5 --count 30 --timeout 20 \
		>"$T_DIR/send.log" 2>&1 || { cat "$T_DIR/send.log"; fail "sender in a failed"; }
	for ((s = 0; s < 30; s++)); do
		grep -c '^got tag=5' "$T_DIR/hold.log" | grep -qx 30 && break
		sleep 0.1
	done
	# A user the policy does not name is refused: req_denied.
	as_user 65533 "$PEER" hold "$IF_B" --tag 7 --peer "$MAC_A" --peer-tag 6 --timeout 2 \
		>"$T_DIR/refused.log" 2>&1 && fail "uid 65533 got an endpoint"

	out=$(ctl_b --socket "$UNETD_SOCK" --json daemon status) || fail "daemon status --json failed"
	echo "json: $out"
	jq_is "status" "$out" '.schema_version == 1 and .reachable == true and .protocol_version == 1'
	[[ $(jq -r .pid <<<"$out") == "$UNETD_PID" ]] || fail "pid is not unetd's ($UNETD_PID): $out"
	[[ $(jq -r .socket <<<"$out") == "$UNETD_SOCK" ]] || fail "socket is not $UNETD_SOCK"
	jq_is "status" "$out" '.clients == 1 and .nendpoints == 1 and .req_bad == 0 and .req_denied == 1'
	jq_is "status" "$out" '.endpoints | length == 1'
	e=$(jq -c '.endpoints[0]' <<<"$out")
	[[ $(jq -r .pid <<<"$e") == "$h" ]] || fail "the endpoint's pid is not the holder's ($h): $e"
	jq_is "endpoint" "$e" --arg i "$IF_B" '.uid == 65534 and .iface == $i and .channels == 1'
	jq_is "endpoint" "$e" '.rx_delivered == 30 and .rx_dropped == 0 and .tx_sent == 0'
	jq_is "endpoint" "$e" '.tx_bad_desc == 0 and .tx_bad_frame == 0 and .tx_foreign_tag == 0
		and .tx_foreign_peer == 0 and .tx_dropped == 0'
	# The same through the text path.
	out=$(ctl_b --socket "$UNETD_SOCK" daemon status) || fail "daemon status failed"
	echo "$out"
	grep -qx "socket: $UNETD_SOCK" <<<"$out" || fail "text: no socket row"
	grep -qx "clients: 1" <<<"$out" || fail "text: no 'clients: 1'"
	grep -qx "req_denied: 1" <<<"$out" || fail "text: no 'req_denied: 1'"
	grep -qE "^  id [0-9]+  iface $IF_B  uid 65534  pid $h  channels 1  rx_delivered 30  rx_dropped 0  tx_sent 0 " \
		<<<"$out" || fail "text: no endpoint line with uid 65534, pid $h and its counters"
	# Anyone may ask; nobody finds the socket through \$UNET_DAEMON_SOCKET.
	out=$(as_nobody "$UNETCTL" --json daemon) || fail "daemon status as nobody failed"
	jq_is "as nobody" "$out" --arg p "$h" '.nendpoints == 1 and (.endpoints[0].pid | tostring) == $p'

	# The client is killed: its endpoint and connection go.
	kill -KILL "$h"
	wait "$h" 2>/dev/null
	for ((s = 0; s < 20; s++)); do
		out=$(ctl_b --socket "$UNETD_SOCK" --json daemon status) || fail "daemon status failed"
		jq -e '.nendpoints == 0' >/dev/null <<<"$out" && break
		sleep 0.1
	done
	echo "after kill: $out"
	jq_is "after kill" "$out" '.nendpoints == 0 and .clients == 0 and .endpoints == []'
	ctl_b --socket "$UNETD_SOCK" daemon status | grep -q '^  id ' &&
		fail "text: endpoint lines after the client was killed"
	stop_unetd
}

t_unetctl_endpoint_kinds() {
	T_MODE=${T_MODE:-skb}
	local out h r d u x
	setup_ns
	# A queue has one UMEM: root's direct endpoint gets an interface of
	# its own in b, beside the one unetd serves.
	x=${IF_B}x
	in_b ip link add "$x" type veth peer name "${IF_B}y" || fail "cannot add a veth in b"
	in_b ip link set "$x" up || fail "cannot bring $x up"
	in_b ip link set "${IF_B}y" up || fail "cannot bring ${IF_B}y up"
	attach b
	ctl_b attach "$x" --mode "$T_MODE" || fail "attach $x failed"
	start_unetd "user 65534 kinds emulated tags 1-100"
	unet_bg_b "$PEER" hold "$x" --tag 200 --peer "$MAC_A" --peer-tag 201 --timeout 60 \
		>"$T_DIR/root.log" 2>&1
	r=$UNET_BG_PID
	d=$(wait_ready "$T_DIR/root.log" "$r") || exit 1
	local AS
	as_user_cmd 65534
	"${AS[@]}" "$PEER" hold "$IF_B" --tag 5 --peer "$MAC_A" --peer-tag 6 --timeout 60 \
		>"$T_DIR/hold.log" 2>&1 &
	h=$!
	_UNET_BG_PIDS+=("$h")
	wait_ready "$T_DIR/hold.log" "$h" >/dev/null

	# Every interface: root's slot, unetd's slot, nobody's endpoint.
	out=$(ctl_b --socket "$UNETD_SOCK" --json endpoint list) || fail "endpoint list failed"
	echo "json: $out"
	jq_is "endpoints" "$out" '.schema_version == 1 and (.endpoints | length == 3)'
	jq_is "root's slot" "$out" --argjson d "$d" --argjson r "$r" --arg x "$x" \
		'any(.endpoints[]; .iface == $x and .id == $d and .kind == "direct" and .pid == $r and .stale == false)'
	jq_is "unetd's slot" "$out" --argjson p "$UNETD_PID" --arg i "$IF_B" \
		'any(.endpoints[]; .iface == $i and .kind == "unetd" and .pid == $p and .comm == "unetd" and .stale == false)'
	u=$(jq -r --argjson p "$UNETD_PID" '.endpoints[] | select(.kind == "unetd" and .pid == $p) | .id' <<<"$out")
	jq_is "nobody's endpoint" "$out" --argjson h "$h" --argjson u "$u" --arg i "$IF_B" \
		'any(.endpoints[]; .kind == "emulated" and .uid == 65534 and .pid == $h and .slot == $u
			and .channels == 1 and .iface == $i)'
	out=$(ctl_b --socket "$UNETD_SOCK" endpoint list) || fail "endpoint list failed"
	echo "$out"
	grep -qE "^iface $x  id $d  kind direct  pid $r  comm unet-peer  " <<<"$out" || fail "text: no direct slot line"
	grep -qE "^iface $IF_B  id $u  kind unetd  pid $UNETD_PID  comm unetd  " <<<"$out" || fail "text: no unetd slot line"
	grep -qE "^iface $IF_B  id [0-9]+  kind emulated  pid $h  uid 65534  channels 1  slot $u$" <<<"$out" ||
		fail "text: no emulated line for nobody's endpoint"
	# status IFACE prints its endpoints through the same function.
	ctl_b --socket "$UNETD_SOCK" status "$IF_B" | grep -qE "^  id [0-9]+  kind emulated  pid $h  uid 65534 " ||
		fail "status $IF_B does not show the emulated endpoint"

	out=$(ctl_b --socket "$UNETD_SOCK" --json channel list) || fail "channel list failed"
	echo "channels: $out"
	jq_is "nobody's channel" "$out" --argjson p "$UNETD_PID" \
		'any(.channels[]; .tag == 5 and .kind == "emulated" and .pid == $p)'
	jq_is "root's channel" "$out" --argjson r "$r" \
		'any(.channels[]; .tag == 200 and .kind == "direct" and .pid == $r)'
	ctl_b --socket "$UNETD_SOCK" channel list "$IF_B" | grep -qE "^iface $IF_B  tag 5  .*  pid $UNETD_PID  kind emulated  " ||
		fail "text channel list: tag 5 not kind emulated"

	# Without the daemon's socket the slot is still unetd's (its comm),
	# its emulated endpoints cannot be listed, and a note says so.
	out=$(ctl_b --socket "$T_DIR/none.sock" --json endpoint list "$IF_B" 2>"$T_DIR/note") ||
		fail "endpoint list without the daemon failed"
	cat "$T_DIR/note"
	jq_is "no daemon" "$out" '(.endpoints | length == 1) and .endpoints[0].kind == "unetd"'
	grep -q "^unetctl: note: slot $u of $IF_B is unetd's" "$T_DIR/note" || fail "no note about the unlisted emulated endpoints"

	kill -KILL "$h"
	wait "$h" 2>/dev/null
	sleep 0.3
	out=$(ctl_b --socket "$UNETD_SOCK" --json endpoint list "$IF_B") || fail "endpoint list failed"
	echo "after kill: $out"
	# The daemon's own slot goes with the interface's last endpoint.
	jq_is "after kill" "$out" '.endpoints == []'
	kill "$r" 2>/dev/null
	stop_unetd
}

t_unetctl_doctor() {
	T_MODE=${T_MODE:-skb}
	local out rc
	setup_ns
	attach b
	start_unetd "user 65534 kinds emulated tags 1-100 endpoints 2"

	# root: direct.
	out=$(ctl_b --socket "$UNETD_SOCK" --json doctor "$IF_B") || fail "doctor as root: exit $?: $out"
	echo "root: $out"
	jq_is "root" "$out" '.schema_version == 1 and .euid == 0 and .endpoint == "direct"
		and .copy == "copy" and .xdp_mode == "skb"'
	jq_is "root" "$out" 'any(.checks[]; .check == "euid" and .status == "ok")'
	jq_is "root" "$out" 'any(.checks[]; .check == "bpffs" and .status == "ok")'
	jq_is "root" "$out" 'any(.checks[]; .check == "xdp" and .status == "ok" and (.message | test("skb mode")))'
	jq_is "root" "$out" 'any(.checks[]; .check == "zerocopy" and .status == "warn" and (.message | test("driver veth has no AF_XDP zero-copy")))'
	jq_is "root" "$out" 'any(.checks[]; .check == "daemon" and .status == "ok" and (.message | test("protocol version 1")))'
	# The policy names only 65534: for root that is a warning, not a failure.
	jq_is "root" "$out" 'any(.checks[]; .check == "policy" and .status == "warn")'
	ctl_b --socket "$UNETD_SOCK" doctor "$IF_B" >"$T_DIR/root.txt" || fail "text doctor as root failed"
	cat "$T_DIR/root.txt"
	grep -qx "endpoint: direct" "$T_DIR/root.txt" || fail "text: no 'endpoint: direct'"
	grep -qE "^  warn  zerocopy  copy mode: driver veth has no AF_XDP zero-copy  fix: " "$T_DIR/root.txt" ||
		fail "text: no zerocopy warning line with its fix"

	# nobody with a grant: emulated, and why not direct.
	out=$(as_nobody "$UNETCTL" --json doctor "$IF_B") || fail "doctor as nobody: exit $?: $out"
	echo "nobody: $out"
	jq_is "nobody" "$out" '.euid == 65534 and .endpoint == "emulated" and .copy == "copy"
		and (.reason | test("not direct \\(euid 65534 is not root, and the policy grants no direct endpoint\\)"))'
	jq_is "nobody" "$out" 'any(.checks[]; .check == "euid" and .status == "warn" and (.message | test("only root makes its own direct endpoints")) and (.fix | length > 0))'
	jq_is "nobody" "$out" 'any(.checks[]; .check == "policy" and .status == "ok"
		and (.message | test("grants uid 65534 .* kinds emulated, tags 1-100, udp none, endpoints 2 \\(holds 0\\), segment 64M"))
		and (.message | test("user 65534")))'
	jq_is "nobody" "$out" 'any(.checks[]; .check == "zerocopy" and (.message | test("unetd copies")))'
	jq_is "nobody" "$out" 'all(.checks[]; .status != "fail")'

	# A user the policy does not name: exit 1, the refusal and its fix.
	out=$(as_user 65533 "$UNETCTL" doctor "$IF_B" 2>"$T_DIR/stderr")
	rc=$?
	echo "$out"
	cat "$T_DIR/stderr"
	((rc == 1)) || fail "doctor as uid 65533: exit $rc, want 1"
	grep -qE "^  fail  policy  unetd's policy refuses uid 65533 \(gid 65533, groups 65533\) on $IF_B: .*  fix: add a rule to unetd's policy, e\.g\. \"user 65533 iface $IF_B kinds emulated" \
		<<<"$out" || fail "no policy failure line with its fix"
	grep -qx "endpoint: none" <<<"$out" || fail "no 'endpoint: none'"
	[[ $(wc -l <"$T_DIR/stderr") == 1 ]] || fail "want one stderr line"
	grep -q "^unetctl: uid 65533 can get no endpoint on $IF_B: unetd's policy refuses uid 65533" "$T_DIR/stderr" ||
		fail "stderr does not say the policy refuses"
	out=$(as_user 65533 "$UNETCTL" --json doctor "$IF_B" 2>/dev/null)
	jq_is "65533" "$out" '.endpoint == "none" and any(.checks[]; .check == "policy" and .status == "fail")'
	# Asking is not being refused: WHOAMI counts nothing.
	out=$(ctl_b --socket "$UNETD_SOCK" --json daemon status) || fail "daemon status failed"
	jq_is "daemon" "$out" '.req_denied == 0 and .req_bad == 0'

	# nobody without a daemon: no endpoint at all.
	out=$(as_nobody "$UNETCTL" --socket "$T_DIR/none.sock" --json doctor "$IF_B" 2>/dev/null)
	rc=$?
	((rc == 1)) || fail "doctor as nobody without a daemon: exit $rc, want 1"
	jq_is "no daemon" "$out" '.endpoint == "none" and any(.checks[]; .check == "daemon" and .status == "fail")'

	stop_unetd

	# nobody with a direct grant and the device's queue set aside for it:
	# direct (granted by unetd), and no queue left for emulated ones.
	start_unetd "user 65534 kinds emulated,direct tags 1-100" --grant-queues 0x1
	out=$(as_nobody "$UNETCTL" --json doctor "$IF_B") || fail "doctor as nobody (grant): exit $?: $out"
	echo "nobody, granted: $out"
	jq_is "granted" "$out" '.endpoint == "direct" and (.reason | test("unetd grants a direct endpoint"))'
	jq_is "granted" "$out" 'any(.checks[]; .check == "policy" and .status == "ok"
		and (.message | test("kinds emulated,direct, .*queues set aside for direct grants: 0x1 \\(all: no emulated endpoints here\\)")))'
	jq_is "granted" "$out" 'any(.checks[]; .check == "memlock" and .status == "ok" and (.message | test("granted segment")))'
	stop_unetd

	local cmd
	for cmd in daemon "daemon status" doctor; do
		# shellcheck disable=SC2086
		ctl_b $cmd --help >"$T_DIR/help.out" 2>&1 || fail "unetctl $cmd --help: exit $?"
		grep -q "^Usage: unetctl \[OPTIONS\] $cmd" "$T_DIR/help.out" || fail "unetctl $cmd --help: no usage"
	done
	expect_err "unknown daemon subcommand" "unknown subcommand: daemon frob" ctl_b daemon frob
}
