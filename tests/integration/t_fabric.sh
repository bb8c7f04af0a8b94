# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_fabric.sh - the `unet` libfabric provider (docs/libfabric.md): fi_info
# lists it, a libfabric client (fabric/tests/ufi-test.c) between two
# namespaces, clean and at 5% injected loss, and a 2-rank Open MPI
# ping-pong over it.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"fabric_info|-|30|fi_info -p unet lists the provider alone (no ofi_rxd/rxm layered on it), RDM, honest attributes; FI_UNET_IFACE; FI_UNET_FAMILY other than ipv4/ipv6/auto refused, saying so; -FI_ENODATA for DGRAM/MSG and without an interface"
	"fabric_hints|-|30|fi_getinfo's matching: -FI_ENODATA for RMA, atomics, DGRAM, MSG, FI_THREAD_SAFE, auto progress, a large inject_size, strict order, 8-byte CQ data, sockaddr and malformed addresses; hints->dest_addr copied; fi_getname -FI_ETOOSMALL"
	"fabric_client|xdp|90|ufi-test between two namespaces: tagged ping-pong 0 B-1 MiB, CQ data, untagged, unexpected, directed, ignore bits, truncation, cancel, peek/claim/discard, 0-byte sendmsg; polling with an FI_AV_MAP, blocking (fi_cq_sread, wait fd) with an FI_AV_TABLE the server fills only after the client's first message arrived (lazy AV, as Open MPI does)"
	"fabric_loss|-|120|ufi-test at 5% injected loss on both interfaces and an 8-deep UAM queue: everything arrives, exactly once, in order"
	"fabric_pingpong|-|60|libfabric-bin's fi_pingpong (RDM, FI_MSG, its own address exchange through hints->dest_addr) runs over unet between two namespaces"
	"fabric_unetd|-|90|ufi-test with its server as user nobody on an emulated endpoint from unetd (FI_UNET_IFACE), the client root's own direct endpoint"
	"fabric_dead|-|60|a peer that dies without closing: the receive waiting on it ends with an FI_EIO error entry (prov_errno ETIMEDOUT) within FI_UNET_TIMEOUT_MS + keepalive, and sends to it fail"
	"fabric_mpi|-|120|Open MPI (pml cm, mtl ofi) selects unet and runs a 2-rank ping-pong between two namespaces"
	"fabric_mpi_routed|-|90|Open MPI over unet between two subnets through a router (t_routed.sh's fixture): a 2-rank ping-pong verifies its messages, which went as U-Net in UDP/IPv4 over routable channels to the off-link peer (chan_delivered on both hosts)"
	"fabric_mpi_routed6|-|90|Open MPI over unet between two IPv6 subnets through an IPv6 router and no IPv4 path (t_rchan6.sh's fixture), FI_UNET_FAMILY=ipv6, the launcher on IPv6 too: the 2-rank ping-pong verifies its messages, which went as U-Net in UDP/IPv6 over routable channels (chan_delivered on both hosts, all of it IPv6 the router forwarded); then with no IPv4 address on the hosts ufi-test runs between them unasked over IPv6 (FI_UNET_FAMILY=auto)"
	"fabric_jumbo|-|90|ufi-test between two namespaces at MTU 9000 (eager messages up to 8908 bytes in one frame, rendezvous pulls in 8992-byte fragments: under 1600 frames where 1500 takes over 2800), then between MTU 9000 and 1500 (the smaller wins: everything arrives)"
	"fabric_routable|-|60|ufi-test between two namespaces over routable channels (FI_UNET_CHANNEL=ip on one side: both ends use them): every size around the eager limits (which follow the routable channel's smaller payload) and up to 1 MiB arrives; the frames are U-Net in UDP/IPv4 (chan_delivered on both sides)"
	"fabric_spoof|-|90|a hostile host on the link: 40 HELLOs from made-up names and one spoofed from the client's address with a tag of its own reach the server before the real ranks talk; once the pair is up, HELLOs from the client's address echoing the nonce of the server's setup HELLO (seen on the wire) with tags of their own; the ranks run ufi-test as usual"
)

UFI_TEST=""

# fabric_prep: the namespaces, the program attached on both sides.
fabric_prep() {
	UFI_TEST=$BUILD/fabric/ufi-test
	[[ -x $UFI_TEST ]] || fail "$UFI_TEST not built"
	[[ -f $BUILD/libunet-fi.so ]] || fail "$BUILD/libunet-fi.so not built"
	command -v fi_info >/dev/null || skip "fi_info not installed (libfabric-bin)"
	setup_ns
	[[ -n $T_MODE ]] || T_MODE=skb
	attach a
	attach b
	export FI_PROVIDER_PATH=$BUILD
	# The SAN pass: fi_info is not built with ASan, so the sanitized
	# provider needs the runtimes preloaded into it.
	FI_INFO=(fi_info)
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		FI_INFO=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
			"ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" fi_info)
	fi
}

# fabric_pair NAME [ufi-test options]: server in b, client in a; both pass.
fabric_pair() {
	local name=$1 s c rc
	shift
	rm -f "$T_DIR/$name".{a,b}.addr
	unet_bg_b "$UFI_TEST" server --me "$T_DIR/$name.b.addr" --peer "$T_DIR/$name.a.addr" "$@" \
		>"$T_DIR/$name.server.log" 2>&1
	s=$UNET_BG_PID
	unet_bg_a env ${UNET_FABRIC_CLIENT_ENV:-} "$UFI_TEST" client --me "$T_DIR/$name.a.addr" \
		--peer "$T_DIR/$name.b.addr" "$@" >"$T_DIR/$name.client.log" 2>&1
	c=$UNET_BG_PID
	fabric_pair_end "$c" "$s" "$T_DIR/$name" "$name" 80
}

# fabric_pair_end CLIENT_PID SERVER_PID LOG_PREFIX NAME SECONDS: the
# client (its log PREFIX.client.log) exits 0 within SECONDS, then the
# server (PREFIX.server.log); both said ok.
fabric_pair_end() {
	local c=$1 s=$2 p=$3 name=$4 rc
	unet_bg_wait "$c" "$5"
	rc=$?
	echo "--- client ($name), exit $rc:"
	cat "$p.client.log"
	((rc == 0)) || { cat "$p.server.log"; fail "ufi-test client ($name) exited with $rc"; }
	finish "$s" "$p.server.log" 20 "ufi-test server ($name)"
	grep -q '^ufi-test ok client' "$p.client.log" || fail "client did not finish ($name)"
	grep -q '^ufi-test ok server' "$p.server.log" || fail "server did not finish ($name)"
}

t_fabric_info() {
	local out n
	fabric_prep
	out=$(in_a "${FI_INFO[@]}" -p unet 2>&1) || fail "fi_info -p unet failed: $out"
	echo "$out"
	n=$(grep -c '^provider:' <<<"$out")
	((n == 1)) || fail "fi_info -p unet lists $n entries, want exactly 1 (no ofi_rxd/ofi_rxm on top)"
	grep -q '^provider: unet$' <<<"$out" || fail "no 'provider: unet'"
	grep -q 'type: *FI_EP_RDM' <<<"$out" || fail "not FI_EP_RDM"
	grep -q "domain: *$IF_A\$" <<<"$out" || fail "domain is not the interface $IF_A"
	out=$(in_a "${FI_INFO[@]}" -p unet -v 2>&1)
	grep -q 'FI_TAGGED' <<<"$out" && grep -q 'FI_DIRECTED_RECV' <<<"$out" ||
		fail "caps lack FI_TAGGED or FI_DIRECTED_RECV"
	grep -q 'data_progress: *FI_PROGRESS_MANUAL' <<<"$out" || fail "progress is not manual"
	# inject_size: the eager limit (48 in short messages, 1024 with UAM's medium ones)
	grep -Eq 'inject_size: *(48|1024)$' <<<"$out" || fail "inject_size is neither 48 nor 1024"
	in_a "${FI_INFO[@]}" -p unet -t FI_EP_DGRAM >/dev/null 2>&1 && fail "answered FI_EP_DGRAM"
	in_a "${FI_INFO[@]}" -p unet -t FI_EP_MSG >/dev/null 2>&1 && fail "answered FI_EP_MSG"
	# FI_UNET_IFACE names the interface; a wrong one is refused
	out=$(in_a env FI_UNET_IFACE="$IF_A" "${FI_INFO[@]}" -p unet 2>&1) || fail "FI_UNET_IFACE=$IF_A: $out"
	out=$(in_a env FI_UNET_IFACE=nosuchif0 "${FI_INFO[@]}" -p unet 2>&1) && fail "FI_UNET_IFACE=nosuchif0 accepted"
	grep -q 'nosuchif0' <<<"$out" || fail "no clear error for a missing FI_UNET_IFACE: $out"
	# FI_UNET_FAMILY: exactly ipv4, ipv6 or auto; anything else refused, saying so
	out=$(in_a env FI_UNET_FAMILY=auto "${FI_INFO[@]}" -p unet 2>&1) || fail "FI_UNET_FAMILY=auto: $out"
	out=$(in_a env FI_UNET_FAMILY=IPv6 "${FI_INFO[@]}" -p unet 2>&1) && fail "FI_UNET_FAMILY=IPv6 accepted"
	grep -q 'FI_UNET_FAMILY=IPv6 is none of ipv4, ipv6, auto' <<<"$out" ||
		fail "no clear error for FI_UNET_FAMILY=IPv6: $out"
	# every other FI_UNET_* too: a value we cannot use is refused by
	# name, never replaced by the default in silence
	local bad
	for bad in FI_UNET_CHANNEL=IP FI_UNET_WINDOW=64k FI_UNET_WINDOW=3 FI_UNET_TIMEOUT_MS=99999999999; do
		out=$(in_a env "$bad" "${FI_INFO[@]}" -p unet 2>&1) && fail "$bad accepted"
		grep -q "$bad is " <<<"$out" || fail "no clear error for $bad: $out"
	done
	out=$(in_a env FI_UNET_CHANNEL=ip FI_UNET_WINDOW=64 FI_UNET_SPIN_US=-1 "${FI_INFO[@]}" -p unet 2>&1) ||
		fail "good values refused: $out"
	# no interface with the program: nothing to offer, and it says why
	ctl_a detach "$IF_A" || fail "detach failed"
	out=$(in_a "${FI_INFO[@]}" -p unet 2>&1) && fail "listed with no interface attached"
	grep -q 'no interface with the unet XDP program' <<<"$out" || fail "no clear error: $out"
	note "fi_info -p unet ok"
}

t_fabric_hints() {
	local out
	fabric_prep
	out=$(in_a env FI_LOG_LEVEL=warn "$UFI_TEST" hints 2>&1)
	echo "$out"
	grep -q '^ufi-test ok hints' <<<"$out" || fail "ufi-test hints failed"
	# each refused AV entry is named, with the rule it broke
	grep -q 'fi_av_insert: name 0 of 1 refused: a version-1 name with its reserved byte set' \
		<<<"$out" && grep -q "fi_av_insert: name 1 of 2 refused: a name of another version than the call's first" \
		<<<"$out" && grep -q 'fi_av_insert: name 0 of 1 refused: IPv4 address bytes in an IPv6 name' \
		<<<"$out" || fail "refused AV inserts were not explained at FI_LOG_LEVEL=warn"
}

t_fabric_client() {
	fabric_prep
	fabric_pair poll --iters 20
	fabric_pair block --iters 10 --blocking --av-table --late-av
	grep -q 'wait fd' "$T_DIR/block.client.log" || fail "the wait fd was not checked"
	grep -q '^idle wait' "$T_DIR/block.client.log" || fail "the idle wait was not checked"
}

t_fabric_loss() {
	local d
	fabric_prep
	ctl_a fault "$IF_A" --drop-ppm 50000 || fail "unetctl fault $IF_A failed"
	ctl_b fault "$IF_B" --drop-ppm 50000 || fail "unetctl fault $IF_B failed"
	# a short UAM queue, so sends also meet a full queue (-FI_EAGAIN,
	# queued rendezvous, fragmented messages cut short)
	FI_UNET_MAX_QUEUED=8 UNET_FABRIC_CLIENT_ENV=FI_UNET_STATS=1 fabric_pair loss --iters 10
	d=$(counter a drop_injected) || exit 1
	((d > 0)) || fail "no frames dropped by the injected loss on a"
	note "drop_injected on a = $d"
	# FI_UNET_STATS=1: the client's counters at close show the loss
	# (retransmissions), and the endpoint's own drop counters are there
	local r
	r=$(sed -n 's/^unet provider stats: .* retransmits \([0-9]*\) .*/\1/p' "$T_DIR/loss.client.log")
	[[ -n $r ]] && ((r > 0)) || fail "FI_UNET_STATS=1: no retransmissions counted ('${r}') after injected loss"
	grep -Eq '^unet provider endpoint stats: rx_dropped [0-9]+ rx_ring_full [0-9]+ rx_fill_empty [0-9]+ ' \
		"$T_DIR/loss.client.log" || fail "FI_UNET_STATS=1: no endpoint drop counters"
}

t_fabric_pingpong() {
	local s rc
	command -v fi_pingpong >/dev/null || skip "fi_pingpong not installed (libfabric-bin)"
	fabric_prep
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		skip "fi_pingpong is not built with the sanitizers (fabric_client covers the provider)"
	fi
	unet_bg_b timeout 40 fi_pingpong -p unet -e rdm -I 20 -S 64 >"$T_DIR/server.log" 2>&1
	s=$UNET_BG_PID
	sleep 0.5
	in_a timeout 40 fi_pingpong -p unet -e rdm -I 20 -S 64 "$IP_B" >"$T_DIR/client.log" 2>&1
	rc=$?
	cat "$T_DIR/client.log"
	((rc == 0)) || { cat "$T_DIR/server.log"; fail "fi_pingpong client exited with $rc"; }
	finish "$s" "$T_DIR/server.log" 20 "fi_pingpong server"
	grep -Eq '^64 +20 +=20 ' "$T_DIR/client.log" || fail "fi_pingpong did not complete 20 transfers of 64 bytes"
}

t_fabric_unetd() {
	local s c rc d
	fabric_prep
	start_unetd "user 65534 kinds emulated tags 1024-65535 endpoints 2"
	# a directory nobody can reach (the test's own is root's alone)
	d=$(mktemp -d /tmp/ufi-nobody.XXXXXX) || fail "mktemp"
	chmod 777 "$d"
	T_CLEANUP+=("cp '$d'/*.log '$T_DIR'/ 2>/dev/null; rm -rf '$d'")
	as_user_cmd 65534
	"${AS[@]}" FI_PROVIDER_PATH="$BUILD" FI_UNET_IFACE="$IF_B" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
		"$UFI_TEST" server --me "$d/b.addr" --peer "$d/a.addr" --iters 5 >"$d/server.log" 2>&1 &
	s=$!
	_UNET_BG_PIDS+=("$s")
	unet_bg_a "$UFI_TEST" client --me "$d/a.addr" --peer "$d/b.addr" --iters 5 >"$d/client.log" 2>&1
	c=$UNET_BG_PID
	unet_bg_wait "$c" 80
	rc=$?
	cat "$d/client.log"
	((rc == 0)) || { cat "$d/server.log"; fail "client exited with $rc"; }
	finish "$s" "$d/server.log" 20 "ufi-test server as nobody"
	grep -q '^ufi-test ok server' "$d/server.log" || fail "the server as nobody did not finish"
	stop_unetd
}

t_fabric_dead() {
	local s c rc t0
	fabric_prep
	export FI_UNET_TIMEOUT_MS=1000
	unet_bg_b "$UFI_TEST" server --dead-peer --me "$T_DIR/b.addr" --peer "$T_DIR/a.addr" \
		>"$T_DIR/server.log" 2>&1
	s=$UNET_BG_PID
	t0=$SECONDS
	unet_bg_a "$UFI_TEST" client --dead-peer --me "$T_DIR/a.addr" --peer "$T_DIR/b.addr" \
		>"$T_DIR/client.log" 2>&1
	c=$UNET_BG_PID
	unet_bg_wait "$c" 30
	rc=$?
	cat "$T_DIR/server.log" "$T_DIR/client.log"
	((rc == 0)) || fail "client exited with $rc"
	grep -q '^ufi-test ok client dead-peer' "$T_DIR/client.log" || fail "client did not see the failure"
	((SECONDS - t0 <= 15)) || fail "took $((SECONDS - t0)) s, want <= 15"
	unet_bg_wait "$s" 5
}

t_fabric_mpi() {
	local prog=$BUILD/fabric/mpi-pingpong agent out rc
	command -v mpirun >/dev/null || skip "mpirun not installed (openmpi-bin)"
	[[ -x $prog ]] || skip "$prog not built (no mpicc: libopenmpi-dev)"
	fabric_prep
	# mpirun stays here; its orteds start in the namespaces (docs/libfabric-facts.md, 4)
	agent=$(fabric_mpi_agent)
	# mpirun runs in namespace a (its orteds call back over the veth);
	# each rank in its own namespace with its own host name
	# Open MPI's own allocations are never freed: no leak report in the
	# SAN pass (the provider's are checked by fabric_client)
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
	out=$(in_a timeout 100 mpirun --allow-run-as-root -np 2 --host "$NS_A,$NS_B" \
		--mca plm_rsh_agent "$agent" --mca oob_tcp_if_include 10.201.0.0/24 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include unet \
		--mca mtl_ofi_verbose 1 --mca mpi_yield_when_idle 1 \
		-x FI_PROVIDER_PATH="$BUILD" -x FI_PROVIDER=unet -x ASAN_OPTIONS \
		"$prog" 100 2>&1)
	rc=$?
	echo "$out"
	((rc == 0)) || fail "mpirun exited with $rc"
	grep -q '^mpi-pingpong ok' <<<"$out" || fail "the MPI program did not verify its messages"
}

# fabric_mpi_agent: the rsh agent through which mpirun, in namespace a,
# starts its orteds in the hosts' namespaces, each with its own host name.
fabric_mpi_agent() {
	local agent=$T_DIR/nsagent.sh
	cat >"$agent" <<-'EOF'
		#!/bin/sh
		h=$1; shift
		exec ip netns exec "$h" unshare --uts sh -c "hostname $h; $*"
	EOF
	chmod +x "$agent"
	echo "$agent"
}

# fabric_prep_routed: the provider built, t_routed.sh's two subnets with
# a router between them, the program attached on both hosts (a and c;
# b only routes).  The hosts get routes to each other's subnet instead
# of default routes: with a default route, every host name lookup the
# MPI launcher makes goes to a name server the router cannot reach and
# waits out the resolver's timeouts (30 s), where without one it fails
# at once and the hosts file answers.
fabric_prep_routed() {
	[[ -f $BUILD/libunet-fi.so ]] || fail "$BUILD/libunet-fi.so not built"
	[[ -n $T_MODE ]] || T_MODE=skb
	setup_routed
	fabric_routes4
	in_c "$UNETCTL" attach "$IF_C" --mode "$T_MODE" || fail "unetctl attach $IF_C failed"
}

fabric_routes4() {
	{ ip -n "$NS_A" route del default && ip -n "$NS_A" route add 10.202.0.0/24 via "$GW1" &&
		ip -n "$NS_C" route del default &&
		ip -n "$NS_C" route add 10.201.0.0/24 via 10.202.0.1; } || fail "routes between the subnets"
}

# fabric_prep_routed6: two subnets with IPv6 on every link and nothing
# else between them (t_rchan6.sh's setup_routed6: a on fd01::/64, c on
# fd02::/64, b forwarding IPv6, the routes through b's link-local
# addresses; the program attached on a and c).  The IPv4 addresses stay
# on the links, but no IPv4 route joins the subnets and b forwards no
# IPv4: whatever crosses b is IPv6.
fabric_prep_routed6() {
	[[ -f $BUILD/libunet-fi.so ]] || fail "$BUILD/libunet-fi.so not built"
	T_MODE=skb
	setup_routed6
	route_via_b
	{ ip -n "$NS_A" route del default && ip -n "$NS_C" route del default &&
		in_b sysctl -qw net.ipv4.ip_forward=0 >/dev/null; } || fail "IPv4 between the subnets off"
}

# chan_delivered NS IFACE: the interface's U-Net-in-UDP frames delivered.
chan_delivered() {
	ip netns exec "$1" "$UNETCTL" --json stats "$2" |
		jq -r '[.. | objects | select(has("chan_delivered")) | .chan_delivered] | first // 0'
}

# Ranks on two subnets, a router between them (a on 10.201.0.0/24, c on
# 10.202.0.0/24 behind b): the provider reaches the off-link peer over a
# routable channel, through its gateway.
t_fabric_mpi_routed() {
	local prog=$BUILD/fabric/mpi-pingpong agent out rc ca cc
	command -v mpirun >/dev/null || skip "mpirun not installed (openmpi-bin)"
	[[ -x $prog ]] || skip "$prog not built (no mpicc: libopenmpi-dev)"
	fabric_prep_routed
	agent=$(fabric_mpi_agent)
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
	out=$(in_a timeout 60 mpirun --allow-run-as-root -np 2 --host "$NS_A,$NS_C" \
		--mca plm_rsh_agent "$agent" --mca oob_tcp_if_include 10.200.0.0/14 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include unet \
		--mca mpi_yield_when_idle 1 \
		-x FI_PROVIDER_PATH="$BUILD" -x FI_PROVIDER=unet -x ASAN_OPTIONS \
		"$prog" 100 2>&1)
	rc=$?
	echo "$out"
	((rc == 0)) || fail "mpirun across the router exited with $rc"
	grep -q '^mpi-pingpong ok' <<<"$out" || fail "the MPI program did not verify its messages"
	ca=$(chan_delivered "$NS_A" "$IF_A")
	cc=$(chan_delivered "$NS_C" "$IF_C")
	note "routable frames delivered across the router: a $ca, c $cc"
	((ca > 0 && cc > 0)) || fail "no U-Net-in-UDP frames delivered (a $ca, c $cc)"
}

# snmp6 NS FIELD: a counter of the namespace's IPv6 statistics.
snmp6() {
	# shellcheck disable=SC2016 # awk's own $1, $2
	ip netns exec "$1" awk -v f="$2" '$1 == f { print $2 }' /proc/net/snmp6
}

# Ranks on two IPv6 subnets, an IPv6 router between them and no IPv4
# path: with FI_UNET_FAMILY=ipv6 the names carry the hosts' IPv6
# addresses and the provider opens routable IPv6 channels through the
# router; Open MPI's launcher talks over IPv6 too.  The proof that the
# data went that way: the routable frames the hosts' programs delivered
# were all forwarded by b as IPv6 (its Ip6OutForwDatagrams covers them;
# with FI_UNET_FAMILY=ipv4 the job cannot run here at all, and with an
# IPv4 path b forwarded no IPv6 datagram).  Then the hosts lose their
# IPv4 addresses, and ufi-test runs between them with no setting: the
# provider takes IPv6 by itself (FI_UNET_FAMILY's default, auto).
t_fabric_mpi_routed6() {
	local prog=$BUILD/fabric/mpi-pingpong agent out rc ca cc f0 f1 s c
	command -v mpirun >/dev/null || skip "mpirun not installed (openmpi-bin)"
	[[ -x $prog ]] || skip "$prog not built (no mpicc: libopenmpi-dev)"
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (fabric_mpi_routed runs the provider across the router in both; names are fuzzed under ASan in test_fabric_proto)"
	fabric_prep_routed6
	agent=$(fabric_mpi_agent)
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
	f0=$(snmp6 "$NS_B" Ip6OutForwDatagrams)
	# The launcher on IPv6 (the hosts' test interfaces, IPv4 left out);
	# with no IPv4 address at all mpirun here never started its ranks,
	# hence the unrouted IPv4 addresses while it runs.
	out=$(in_a timeout 60 mpirun --allow-run-as-root -np 2 --host "$NS_A,$NS_C" \
		--mca plm_rsh_agent "$agent" --mca oob_tcp_if_include "$IF_A,$IF_C" \
		--mca oob_tcp_disable_family IPv4 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include unet \
		--mca mpi_yield_when_idle 1 \
		-x FI_PROVIDER_PATH="$BUILD" -x FI_PROVIDER=unet -x FI_UNET_FAMILY=ipv6 -x ASAN_OPTIONS \
		"$prog" 100 2>&1)
	rc=$?
	echo "$out"
	((rc == 0)) || fail "mpirun across the IPv6 router exited with $rc"
	grep -q '^mpi-pingpong ok' <<<"$out" || fail "the MPI program did not verify its messages"
	f1=$(snmp6 "$NS_B" Ip6OutForwDatagrams)
	ca=$(chan_delivered "$NS_A" "$IF_A")
	cc=$(chan_delivered "$NS_C" "$IF_C")
	note "routable frames delivered: a $ca, c $cc; IPv6 datagrams b forwarded: $((f1 - f0))"
	((ca > 0 && cc > 0)) || fail "no U-Net-in-UDP frames delivered (a $ca, c $cc)"
	((f1 - f0 >= ca + cc)) ||
		fail "b forwarded $((f1 - f0)) IPv6 datagrams, fewer than the $((ca + cc)) routable frames delivered: not all went over IPv6"

	note "no IPv4 address on either host: the provider names itself by IPv6 unasked"
	{ ip -n "$NS_A" -4 addr flush dev "$IF_A" && ip -n "$NS_C" -4 addr flush dev "$IF_C"; } ||
		fail "flushing the hosts' IPv4 addresses"
	UFI_TEST=$BUILD/fabric/ufi-test
	export FI_PROVIDER_PATH=$BUILD
	rm -f "$T_DIR"/auto6.{a,b}.addr
	unet_bg_c "$UFI_TEST" server --me "$T_DIR/auto6.b.addr" --peer "$T_DIR/auto6.a.addr" \
		--iters 2 --no-idle >"$T_DIR/auto6.server.log" 2>&1
	s=$UNET_BG_PID
	unet_bg_a "$UFI_TEST" client --me "$T_DIR/auto6.a.addr" --peer "$T_DIR/auto6.b.addr" \
		--iters 2 --no-idle >"$T_DIR/auto6.client.log" 2>&1
	c=$UNET_BG_PID
	fabric_pair_end "$c" "$s" "$T_DIR/auto6" "auto6" 60
	grep -q '^name fi_unet://.*/\[fd01:0000:0000:0000:0000:0000:0000:0001\]/064:' \
		"$T_DIR/auto6.client.log" ||
		fail "the client did not name itself by fd01::1/64: $(grep '^name' "$T_DIR/auto6.client.log")"
}

# Made-up names and a spoofed HELLO must not cost
# the real ranks their channel.  Both sides learn the names, then wait
# (--wait) while hello_forge.py sends the forged datagrams; then they run.
t_fabric_spoof() {
	local d=$T_DIR s c r i
	fabric_prep
	command -v python3 >/dev/null || skip "python3 not installed"
	rm -f "$d"/sp.a.addr "$d"/sp.b.addr "$d/sp.go" "$d/sp.replay" "$d/sp.hold"
	unet_bg_b env FI_UNET_CONNECT_TIMEOUT_MS=5000 FI_UNET_TIMEOUT_MS=3000 FI_LOG_LEVEL=warn \
		"$UFI_TEST" server --me "$d/sp.b.addr" --peer "$d/sp.a.addr" --wait "$d/sp.go" \
		--hold "$d/sp.hold" --iters 3 >"$d/sp.server.log" 2>&1
	s=$UNET_BG_PID
	unet_bg_a env FI_UNET_CONNECT_TIMEOUT_MS=5000 FI_UNET_TIMEOUT_MS=3000 \
		"$UFI_TEST" client --me "$d/sp.a.addr" --peer "$d/sp.b.addr" --wait "$d/sp.go" \
		--hold "$d/sp.hold" --iters 3 >"$d/sp.client.log" 2>&1
	c=$UNET_BG_PID
	for ((i = 0; i < 200; i++)); do
		[[ -s $d/sp.a.addr && -s $d/sp.b.addr ]] && break
		sleep 0.05
	done
	[[ -s $d/sp.a.addr && -s $d/sp.b.addr ]] || fail "the ranks wrote no names"
	in_a timeout 10 python3 "$HERE/hello_forge.py" \
		"$(cat "$d/sp.a.addr")" "$(cat "$d/sp.b.addr")" 40 ||
		fail "hello_forge.py failed"
	# A host on the path sees the setup once: the server's HELLO to the
	# client, whose nonce it echoes from the client's address, with tags
	# of its own, once the pair is up (both ranks hold there).  Before
	# the nonce was renewed after setup, the server renegotiated and
	# both ranks failed (ECONNRESET).
	unet_bg_a python3 "$HERE/hello_forge.py" replay "$IF_A" \
		"$(cat "$d/sp.a.addr")" "$(cat "$d/sp.b.addr")" "$d/sp.replay" >"$d/sp.replay.log" 2>&1
	r=$UNET_BG_PID
	for ((i = 0; i < 200; i++)); do
		grep -q 'watching' "$d/sp.replay.log" 2>/dev/null && break
		sleep 0.05
	done
	grep -q 'watching' "$d/sp.replay.log" || fail "hello_forge.py replay did not start"
	# as a shell writes it, made empty first: the ranks wait for the whole
	# line (reading it empty failed this test about once in 25 runs)
	: >"$d/sp.go"
	sleep 0.2
	echo go >"$d/sp.go"
	for ((i = 0; i < 400; i++)); do
		grep -q '^ufi-test holding' "$d/sp.client.log" && grep -q '^ufi-test holding' "$d/sp.server.log" &&
			break
		sleep 0.05
	done
	grep -q '^ufi-test holding' "$d/sp.server.log" ||
		{ tail -n 20 "$d"/sp.server.log "$d"/sp.client.log "$d"/sp.replay.log; fail "the ranks did not set up (no hold)"; }
	echo go >"$d/sp.replay"
	unet_bg_wait "$r" 30 || { cat "$d/sp.replay.log"; fail "the replay did not run"; }
	cat "$d/sp.replay.log"
	echo go >"$d/sp.hold"
	# Exits 0 only if the ranks talked despite the forged and replayed HELLOs.
	fabric_pair_end "$c" "$s" "$d/sp" "after the forged and replayed HELLOs" 60
	grep -q 'renegotiates' "$d/sp.server.log" && fail "the replayed HELLO renegotiated"
	true
}

# fabric_mtu MTU_A MTU_B: the test link's two ends.
fabric_mtu() {
	in_a ip link set "$IF_A" mtu "$1" || fail "cannot set MTU $1 on $IF_A"
	in_b ip link set "$IF_B" mtu "$2" || fail "cannot set MTU $2 on $IF_B"
}

# The provider at a jumbo MTU: the client's ping-pong (every size around
# the eager limits, up to 1 MiB) at 9000, with the frames b's program saw
# counted (about 800 in eager frames and rendezvous fragments of up to
# 8992 bytes; at MTU 1500, or with frames held to one chunk, the same run
# takes over 2800); then 9000 against 1500.
t_fabric_jumbo() {
	local f
	fabric_prep
	fabric_mtu 9000 9000
	fabric_pair jumbo --iters 2
	f=$(counter b rx) || exit 1
	note "frames into b at MTU 9000: $f"
	((f < 1600)) || fail "at MTU 9000 b took $f frames: not the jumbo frames' count (< 1600)"
	fabric_mtu 9000 1500
	fabric_pair mixed --iters 2
}

# Routable channels on-link: FI_UNET_CHANNEL=ip on the client alone, so
# the server learns it from the client's name (both ends must agree).
# The frames are counted where the XDP program delivers U-Net-in-UDP.
t_fabric_routable() {
	local ca cb
	fabric_prep
	UNET_FABRIC_CLIENT_ENV=FI_UNET_CHANNEL=ip fabric_pair routable --iters 2
	ca=$(counter a chan_delivered) || exit 1
	cb=$(counter b chan_delivered) || exit 1
	note "routable frames delivered: a $ca, b $cb"
	((ca > 0 && cb > 0)) || fail "no U-Net-in-UDP frames delivered (a $ca, b $cb): not routable channels"
}
