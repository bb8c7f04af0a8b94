# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# lib.sh - what the integration tests share: the helpers a test calls
# (fail/skip/note, namespaces, attach, counters, expect_*, wait_ready,
# finish/stop, the veth-pair cmocka runner) and the runner itself
# (run_test, main).  Sourced by run.sh, the entry point; do not run it.
#
# The tests live in the area files t_*.sh beside it.  Each area file
# defines its test functions t_NAME and appends one line per test to
# TESTS ("name|modes|timeout|what it checks", see run.sh).  run.sh
# sources every t_*.sh, so adding a test is one function and one table
# line in an area file, and adding an area is one new t_AREA.sh.

usage() {
	echo "usage: $0 [--build DIR] [--mode native|skb|both|alternate|alternate-skb] [--list] [NAME[/MODE]...]"
}

# ---- helpers used inside a test (they run in the test's own shell) --------

# fail MSG: end the test as failed.
fail() {
	echo "FAIL: $*"
	echo "$*" >"$T_DIR/reason"
	exit 1
}

# skip MSG: end the test as skipped (a missing kernel feature, not a pass).
skip() {
	echo "SKIP: $*"
	echo "$*" >"$T_DIR/reason"
	exit 77
}

# note MSG: a line in the test's log.
note() { echo "--- $*"; }

# Extra cleanup steps of a test, run before the namespaces go.
T_CLEANUP=()
t_cleanup() {
	local c
	for c in "${T_CLEANUP[@]}"; do
		eval "$c" || true
	done
	T_CLEANUP=()
	unet_netns_cleanup
}

# setup_ns [NQUEUES]: the namespaces of this test.
setup_ns() {
	grep -qw bpf /proc/filesystems || skip "this kernel has no bpffs"
	unet_netns_setup "u$$" "${1:-1}" || fail "namespace setup failed"
	note "namespaces $NS_A/$NS_B, $IF_A ($MAC_A) <-> $IF_B ($MAC_B), pin root $UNET_PIN_ROOT"
}

# make_build_dir: the build tree as `make -C "$ROOT" BUILD=...` wants it:
# relative to the tree when it lies inside (make cannot take a target
# path with a space, and the clone's path may have one).
make_build_dir() {
	if [[ $BUILD_TREE == "$ROOT"/* ]]; then
		echo "${BUILD_TREE#"$ROOT"/}"
	else
		echo "$BUILD_TREE"
	fi
}

ctl_a() { in_a "$UNETCTL" "$@"; }
ctl_b() { in_b "$UNETCTL" "$@"; }

# attach SIDE: attach the program to that side's interface in $T_MODE and
# check that status reports that mode.  Skips when the mode is missing.
attach() {
	local side=$1 ifname out rc mode
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	out=$(in_"$side" "$UNETCTL" attach "$ifname" --mode "$T_MODE" 2>&1)
	rc=$?
	echo "$out"
	if ((rc != 0)); then
		if grep -qiE 'not supported|EOPNOTSUPP' <<<"$out"; then
			skip "XDP $T_MODE mode not supported on veth here: $out"
		fi
		fail "unetctl attach $ifname --mode $T_MODE failed (rc $rc): $out"
	fi
	mode=$(in_"$side" "$UNETCTL" --json status "$ifname" |
		jq -r '[.. | objects | select(has("mode")) | .mode] | first // empty')
	[[ $mode == "$T_MODE" ]] || fail "status of $ifname says mode '$mode', want $T_MODE"
}

# counter SIDE NAME: one interface counter from `unetctl --json stats`.
counter() {
	local side=$1 name=$2 ifname v
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	v=$(in_"$side" "$UNETCTL" --json stats "$ifname" |
		jq -r --arg k "$name" '[.. | objects | select(has($k)) | .[$k]] | first // empty')
	[[ $v =~ ^[0-9]+$ ]] || fail "unetctl --json stats $ifname has no counter '$name' (got '$v')"
	echo "$v"
}

# expect_stat SIDE NAME VALUE: the counter reaches VALUE within 3 s and
# stays there (not above).
expect_stat() {
	local side=$1 name=$2 want=$3 v i
	for ((i = 0; i < 30; i++)); do
		v=$(counter "$side" "$name") || exit 1
		((v >= want)) && break
		sleep 0.1
	done
	((v == want)) || fail "counter $name on side $side is $v, want $want"
	note "counter $name on side $side = $v"
}

# channel_json SIDE: `unetctl --json channel list` of that side, as an
# array of channel objects.
channel_json() {
	local side=$1 ifname
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	in_"$side" "$UNETCTL" --json channel list "$ifname" |
		jq -c '[.. | objects | select(has("tag") and has("peer_tag"))]' ||
		fail "unetctl --json channel list $ifname failed"
}

# chan_field SIDE TAG FIELD: FIELD of channel TAG ("" if there is none).
chan_field() {
	channel_json "$1" | jq -r --argjson t "$2" --arg f "$3" \
		'[.[] | select(.tag == $t)] | first | if . == null then "" else (.[$f] | tostring) end'
}

# endpoint_json SIDE: `unetctl --json endpoint list`, as an array.
endpoint_json() {
	local side=$1 ifname
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	in_"$side" "$UNETCTL" --json endpoint list "$ifname" |
		jq -c '[.. | objects | select(has("id") and has("pid") and has("comm"))
			| .nqueues = (.nqueues // .queues)]' ||
		fail "unetctl --json endpoint list $ifname failed"
}

# wait_ready LOG PID [TIMEOUT]: wait for the tool's "ready" line; print
# its endpoint id.
wait_ready() {
	local log=$1 pid=$2 t=${3:-15} i
	for ((i = 0; i < t * 20; i++)); do
		if grep -q '^ready ' "$log" 2>/dev/null; then
			sed -n 's/^ready endpoint=\([0-9]*\).*/\1/p' "$log" | head -1
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "--- $log:" >&2
			cat "$log" >&2
			fail "process $pid exited before it was ready (see above)"
		fi
		sleep 0.05
	done
	cat "$log" >&2
	fail "process $pid not ready after ${t}s"
}

# wait_until TIMEOUT WHAT CMD...: poll CMD (quietly) until it succeeds;
# fail saying WHAT after TIMEOUT seconds.  A condition, not a fixed sleep.
wait_until() {
	local t=$1 what=$2 i
	shift 2
	for ((i = 0; i < t * 20; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "not ready after ${t}s: $what"
}

# wait_log TIMEOUT FILE PATTERN: wait until FILE has a line matching the
# extended regular expression PATTERN (a server's "listening" line).
wait_log() {
	wait_until "$1" "'$3' in $2" grep -qE -- "$3" "$2"
}

# kernel_udp_in a|b|NETNS: InDatagrams+OutDatagrams of that namespace's
# kernel UDP (a test that says its datagrams went over U-Net checks it
# unmoved).
kernel_udp_in() {
	local ns=$1
	[[ $ns == a ]] && ns=$NS_A
	[[ $ns == b ]] && ns=$NS_B
	# shellcheck disable=SC2016
	ip netns exec "$ns" awk '/^Udp:/ { if (h) { print $2 + $5; exit } h = 1 }' /proc/net/snmp
}

# wait_port SIDE udp|tcp PORT: wait until a kernel socket of namespace
# SIDE is bound to UDP PORT or listens on TCP PORT.
wait_port() {
	local opt=-Hlun
	[[ $2 == tcp ]] && opt=-Hltn
	wait_until 15 "$2 port $3 in namespace $1" _port_open "$1" "$opt" "$3"
}
_port_open() { [[ -n $(in_"$1" ss "$2" "sport = :$3") ]]; }

# finish PID LOG TIMEOUT WHAT: wait for a background tool, fail if it did
# not exit 0.
finish() {
	local pid=$1 log=$2 t=$3 what=$4 rc
	unet_bg_wait "$pid" "$t"
	rc=$?
	echo "--- $what ($log), exit $rc:"
	cat "$log"
	((rc == 0)) || fail "$what exited with $rc"
}

# stop PID LOG WHAT: SIGTERM a holding tool and require exit 0.
stop() {
	kill -TERM "$1" 2>/dev/null
	finish "$1" "$2" 10 "$3"
}

# make_tsan: the ThreadSanitizer build (make tsan, into build-tsan/ beside
# the source); skips the test if the compiler cannot build with
# -fsanitize=thread.
make_tsan() {
	make -s -j"$(nproc)" -C "$ROOT" tsan >"$T_DIR/make-tsan.log" 2>&1 && return 0
	cat "$T_DIR/make-tsan.log"
	grep -qE 'tsan|fsanitize=thread' "$T_DIR/make-tsan.log" &&
		skip "the compiler cannot build with -fsanitize=thread"
	fail "make tsan failed"
}

# tsan_copy TOOL...: unet-run, the preload library and the tools TOOL...
# of the ThreadSanitizer build copied into a fresh directory (removed
# with the test), named in TSAN_COPY (tools in its tools/).  A copy: the
# loader splits LD_PRELOAD at spaces, and the clone may sit under a path
# with one (docs/unet-run.md, Limits).
tsan_copy() {
	TSAN_COPY=$(mktemp -d /tmp/unet-tsan.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$TSAN_COPY'")
	mkdir -p "$TSAN_COPY/tools" &&
		cp "$ROOT/build-tsan/unet-run" "$ROOT/build-tsan/libunet-preload.so" "$TSAN_COPY/" &&
		cp "${@/#/$ROOT/build-tsan/tools/}" "$TSAN_COPY/tools/" || fail "cannot copy the ThreadSanitizer build"
}


# run_pair_cmocka NAME NTESTS: build/tests/NAME on a veth pair inside
# namespace a, both ends driven by one process; it must pass all NTESTS
# cmocka tests and skip none.  Leaves the pair's first end in PAIR_X.
run_pair_cmocka() {
	local name=$1 ntests=$2 bin=$BUILD/tests/$1 y
	[[ -x $bin ]] || fail "$bin not built"
	setup_ns 1
	PAIR_X="${IF_A}x" y="${IF_A}y"
	in_a ip link add "$PAIR_X" type veth peer name "$y" || fail "cannot create veth $PAIR_X/$y"
	in_a ip link set "$PAIR_X" up && in_a ip link set "$y" up || fail "cannot bring up $PAIR_X/$y"
	in_a env UNET_TEST_IFACE_A="$PAIR_X" UNET_TEST_IFACE_B="$y" UNET_TEST_XDP_MODE="$T_MODE" \
		UNET_PIN_ROOT="$UNET_PIN_ROOT" "$bin" >"$T_DIR/$name.log" 2>&1
	local rc=$?
	cat "$T_DIR/$name.log"
	((rc == 0)) || fail "$name exited with $rc"
	grep -q '^\[  SKIPPED \]' "$T_DIR/$name.log" && fail "$name skipped tests with interfaces given"
	grep -q "^\\[  PASSED  \\] $ntests test" "$T_DIR/$name.log" ||
		fail "$name did not pass all $ntests tests"
}

# ---- the runner -------------------------------------------------------------

# Run one test (internal: in its own session, see run_test).
internal_run() {
	local id=$1 name mode fn
	name=${id%%/*}
	mode=${id#*/}
	[[ $mode == "$id" ]] && mode=""
	fn=t_$name
	export T_MODE=$mode
	trap t_cleanup EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	note "test $id"
	"$fn"
	exit 0
}

# run_test ID TIMEOUT: run one test in a new session with a time limit,
# print its result line, count it.
run_test() {
	local id=$1 t=$2 dir pid rc start elapsed reason
	dir=$WORK/${id//\//_}
	mkdir -p "$dir"
	start=$SECONDS
	: >"$dir/log"
	# Append mode: the supervisor adds lines to the same log.
	T_DIR=$dir UNET_NETNS_RECORD=$dir/resources \
		setsid bash "$SELF" --build "$BUILD" --internal-run "$id" >>"$dir/log" 2>&1 </dev/null &
	pid=$!
	local killed=0
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS - start > t)); then
			killed=1
			echo "=== time limit of ${t}s reached: SIGTERM" >>"$dir/log"
			kill -TERM -- -"$pid" 2>/dev/null
			local i
			for ((i = 0; i < 100; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			kill -KILL -- -"$pid" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	{ wait "$pid"; } 2>/dev/null
	rc=$?
	# Whatever the test left (it may have been SIGKILLed).
	kill -KILL -- -"$pid" 2>/dev/null
	unet_netns_rescue "$dir/resources"
	elapsed=$((SECONDS - start))
	reason=$(cat "$dir/reason" 2>/dev/null)
	if ((killed)); then
		reason="timed out after ${t}s"
		rc=1
	fi
	if ((rc == 0)); then
		echo "PASS $id (${elapsed}s)"
		((n_pass++))
	elif ((rc == 77)); then
		echo "SKIP $id: ${reason:-skipped}"
		((n_skip++))
	else
		echo "FAIL $id: ${reason:-exit $rc} (${elapsed}s)"
		echo "    --- last lines of the log ($id):"
		tail -n 40 "$dir/log" | sed 's/^/    /'
		((n_fail++))
	fi
}

main() {
	BUILD=build
	local mode=both list=0 internal="" sel=()
	while (($#)); do
		case $1 in
		--build) BUILD=${2:?--build needs a directory}; shift 2 ;;
		--mode) mode=${2:?--mode needs native, skb, both, alternate or alternate-skb}; shift 2 ;;
		--list) list=1; shift ;;
		--internal-run) internal=${2:?}; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		-*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
		*) sel+=("$1"); shift ;;
		esac
	done
	# alternate: each data-path test once, native and skb in turn down the
	# table, so that both modes are still exercised across the suite;
	# alternate-skb: the same turns the other way round (make check's
	# two passes take one each: every data-path test runs in both modes
	# across make check, one of them under the sanitizers).
	case $mode in native) modes=(native) ;; skb) modes=(skb) ;;
	both | alternate) modes=(native skb) ;; alternate-skb) modes=(skb native) ;;
	*) echo "run.sh: bad --mode '$mode'" >&2; exit 2 ;; esac
	[[ $BUILD == /* ]] || BUILD=$PWD/$BUILD

	if [[ -z $internal && $list == 0 && $(id -u) -eq 0 ]]; then
		# Tests run programs as nobody and other users: every test runs
		# them from a copy of the build that those users can reach
		# (scripts/stage.sh), wherever the clone is.  BUILD_TREE stays
		# the build itself, for what make builds into it (t_pkg.sh).
		[[ -d $BUILD ]] || { echo "run.sh: no build directory $BUILD" >&2; exit 2; }
		BUILD_TREE=$BUILD
		unet_stage "$BUILD" || exit 1
		trap 'unet_stage_remove' EXIT
		BUILD=$UNET_STAGE
	fi
	BUILD_TREE=${BUILD_TREE:-$BUILD}
	UNETCTL=$BUILD/unetctl
	PEER=$BUILD/tools/unet-peer
	INJECT=$BUILD/tools/unet-inject
	UUDP=$BUILD/tools/unet-udp
	KUDP=$BUILD/tools/udp-kern
	export BUILD BUILD_TREE UNETCTL PEER INJECT UUDP KUDP

	if [[ -n $internal ]]; then
		internal_run "$internal"
	fi

	# Expand the table into test ids with timeouts.
	local ids=() tos=() descs=() entry name kind to desc m turn=0 test_modes
	for entry in "${TESTS[@]}"; do
		IFS='|' read -r name kind to desc <<<"$entry"
		if [[ $kind == xdp ]]; then
			test_modes=("${modes[@]}")
			if [[ $mode == alternate* ]]; then
				test_modes=("${modes[turn % 2]}")
				turn=$((turn + 1))
			fi
			for m in "${test_modes[@]}"; do
				ids+=("$name/$m")
				tos+=("$to")
				descs+=("$desc")
			done
		else
			ids+=("$name")
			tos+=("$to")
			descs+=("$desc")
		fi
	done
	local i
	if ((list)); then
		for i in "${!ids[@]}"; do
			printf '%-22s %s\n' "${ids[i]}" "${descs[i]}"
		done
		exit 0
	fi
	# Select.
	local run=() s found
	if ((${#sel[@]})); then
		for s in "${sel[@]}"; do
			found=0
			for i in "${!ids[@]}"; do
				if [[ ${ids[i]} == "$s" || ${ids[i]%%/*} == "$s" ]]; then
					run+=("$i")
					found=1
				fi
			done
			((found)) || { echo "run.sh: no test named '$s' (see --list)" >&2; exit 2; }
		done
	else
		run=("${!ids[@]}")
	fi

	n_pass=0 n_fail=0 n_skip=0
	if [[ $(id -u) -ne 0 ]]; then
		for i in "${run[@]}"; do
			echo "SKIP ${ids[i]}: needs root"
			((n_skip++))
		done
		echo "$n_pass passed, $n_fail failed, $n_skip skipped"
		exit 0
	fi
	local missing=()
	for s in "$UNETCTL" "$PEER" "$INJECT"; do
		[[ -x $s ]] || missing+=("$s")
	done
	command -v jq >/dev/null || missing+=(jq)
	WORK=$(mktemp -d /tmp/unet-it.XXXXXX) || exit 1
	export WORK
	# Interrupted runs must not leave their logs behind either.
	if [[ ${UNET_TEST_KEEP_LOGS:-0} != 1 ]]; then
		trap 'rm -rf "$WORK"; unet_stage_remove' EXIT
	else
		trap 'unet_stage_remove' EXIT
	fi
	trap 'exit 130' INT
	trap 'exit 143' TERM
	for i in "${run[@]}"; do
		if ((${#missing[@]})); then
			echo "FAIL ${ids[i]}: missing ${missing[*]}"
			((n_fail++))
			continue
		fi
		run_test "${ids[i]}" "${tos[i]}"
	done
	if [[ ${UNET_TEST_KEEP_LOGS:-0} == 1 ]]; then
		echo "logs in $WORK"
	else
		rm -rf "$WORK"
	fi
	echo "$n_pass passed, $n_fail failed, $n_skip skipped"
	((n_fail == 0))
}
