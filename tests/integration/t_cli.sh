# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_cli.sh - the user-facing surface: unetctl's errors, the public API's
# argument checks, the benchmark script's output form.  Sourced by run.sh
# (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"cli_errors|-|90|unetctl one-line errors with exit 1 (privileges, unsafe pin paths named); --help exits 0"
	"api_errors|-|90|public API rejects invalid arguments (build/tests/test_api_errors)"
	"queue_limit|-|60|20-queue veth: unetctl attach warns (device, limit 16, queues dropped), status shows device_queues and the warning; 1 queue: no warning"
	"bench_smoke|-|180|unet-bench --quick: output has the expected form (UAM against raw U-Net interleaved among it)"
	"bench_vs|-|90|unet-bench pingpong --vs: UAM and raw U-Net interleaved in one run, both p50s and their ratio, nothing lost; misuse of --vs refused"
	"install_build|-|240|make CFLAGS=\"-O1 -g\" builds the library and unetctl, objects depend on their headers; make install PREFIX=/opt/...: an example compiles with pkg-config's flags and #include <unet-xdp/unet.h>, and links"
)

# expect_err WHAT REGEX CMD...: CMD exits 1 with exactly one stderr line
# "unetctl: ..." matching REGEX (case-insensitive), nothing on stdout.
expect_err() {
	local what=$1 re=$2 rc out err n
	shift 2
	out=$("$@" 2>"$T_DIR/stderr")
	rc=$?
	err=$(cat "$T_DIR/stderr")
	n=$(wc -l <"$T_DIR/stderr")
	echo "[$what] rc=$rc stderr: $err"
	((rc == 1)) || fail "$what: exit $rc, want 1 (stderr: $err)"
	((n == 1)) || fail "$what: $n stderr lines, want 1: $err"
	[[ $err == "unetctl: "* ]] || fail "$what: error does not start with 'unetctl: ': $err"
	grep -qiE "$re" <<<"$err" || fail "$what: error does not match /$re/: $err"
	[[ -z $out ]] || fail "$what: unexpected stdout: $out"
}

# bpffs_dir MOUNT_OPTS: a fresh temp dir with a bpffs mounted on it
# (unmounted and removed with the test); prints its path.
bpffs_dir() {
	local d
	d=$(mktemp -d /tmp/unet-bpffs-t.XXXXXX) || fail "mktemp"
	echo "mount $d" >>"$UNET_NETNS_RECORD"
	mount -t bpf -o "$1" bpf "$d" || fail "cannot mount a bpffs with -o $1"
	T_CLEANUP+=("umount '$d'; rmdir '$d'")
	echo "$d"
}

t_cli_errors() {
	setup_ns
	T_MODE=skb
	# unetctl where the nobody user can run it.
	local priv
	priv=$(mktemp -d /tmp/unet-cli.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$priv'")
	install -m 755 "$UNETCTL" "$priv/unetctl"
	local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

	expect_err "unknown subcommand" "unknown|command|usage" ctl_a frobnicate
	expect_err "no such interface" "no such|not found|nosuch|exist" ctl_a attach nosuchif0
	expect_err "not attached" "attach" ctl_a stats "$IF_A"
	# Privileges (docs/unetctl.md): uid 0, because the pins are root's;
	# capabilities without it are not enough, and root needs CAP_SYS_ADMIN.
	expect_err "not root" "needs root: the pins under $UNET_PIN_ROOT are root's" \
		in_a "${nobody[@]}" "$priv/unetctl" attach "$IF_A"
	local caps=+bpf,+net_admin,+net_raw,+perfmon,+sys_admin
	expect_err "not root, with capabilities" "needs root: the pins under $UNET_PIN_ROOT are root's" \
		in_a "${nobody[@]}" --inh-caps=$caps --ambient-caps=$caps "$priv/unetctl" attach "$IF_A"
	caps=-all,+bpf,+net_admin,+perfmon
	expect_err "root without CAP_SYS_ADMIN" "operation not permitted: needs root with CAP_SYS_ADMIN" \
		in_a setpriv --inh-caps=$caps --ambient-caps=$caps --bounding-set=$caps \
		"$UNETCTL" attach "$IF_A" --mode skb

	# Pin roots and directories another user could change are refused,
	# and the error names them.
	local bad
	bad=$(bpffs_dir mode=0777) || exit 1
	expect_err "pin root writable by others" "pin root $bad is writable by group or others \(mode [0-7]*777\)" \
		ctl_a --pin-root "$bad" attach "$IF_A"
	bad=$(bpffs_dir mode=0700) || exit 1
	chown 65534 "$bad" || fail "chown $bad"
	expect_err "pin root owned by nobody" "pin root $bad is owned by uid 65534" \
		ctl_a --pin-root "$bad" status "$IF_A"
	bad=$(bpffs_dir mode=0700) || exit 1
	# The library's directory for IF_A: <pin root>/<name>@<namespace a's inode>.
	local dev
	dev="$bad/$IF_A@$(in_a stat -L -c %i /proc/self/ns/net)"
	mkdir -m 0700 "$dev" && chown 65534 "$dev" || fail "mkdir/chown $dev"
	expect_err "pin directory owned by nobody" "pin directory $dev is owned by uid 65534" \
		ctl_a --pin-root "$bad" attach "$IF_A"
	chown 0 "$dev" && chmod 0770 "$dev" || fail "chmod $dev"
	expect_err "pin directory writable by group" "pin directory $dev is writable by group" \
		ctl_a --pin-root "$bad" attach "$IF_A"

	local tmpfs
	tmpfs=$(mktemp -d /tmp/unet-tmpfs.XXXXXX) || fail "mktemp"
	echo "mount $tmpfs" >>"$UNET_NETNS_RECORD"
	mount -t tmpfs tmpfs "$tmpfs" || fail "cannot mount a tmpfs"
	T_CLEANUP+=("umount '$tmpfs'; rmdir '$tmpfs'")
	expect_err "no bpffs" "bpf" ctl_a --pin-root "$tmpfs" attach "$IF_A"

	attach a
	unet_bg_a "$PEER" hold "$IF_A" --tag 10 --peer "$MAC_B" --peer-tag 20 --xdp-mode skb \
		--timeout 60 >"$T_DIR/hold.log" 2>&1
	local h=$UNET_BG_PID e
	e=$(wait_ready "$T_DIR/hold.log" "$h") || exit 1
	expect_err "tag in use" "in use" ctl_a channel add "$IF_A" --endpoint "$e" --tag 10 \
		--peer "$MAC_B" --peer-tag 21
	expect_err "bad MAC" "mac|address" ctl_a channel add "$IF_A" --endpoint "$e" --tag 11 \
		--peer zz:zz:zz:zz:zz:zz --peer-tag 21
	expect_err "unknown channel" "no channel|no such|not found|exist|unknown" ctl_a channel del "$IF_A" 4242
	# The same add with good arguments works, and shows up.
	ctl_a channel add "$IF_A" --endpoint "$e" --tag 11 --peer "$MAC_B" --peer-tag 21 ||
		fail "a valid channel add failed"
	[[ $(chan_field a 11 endpoint) == "$e" ]] || fail "added channel 11 not listed for endpoint $e"
	ctl_a channel del "$IF_A" 11 || fail "channel del 11 failed"
	[[ -z $(chan_field a 11 tag) ]] || fail "channel 11 still listed after del"
	stop "$h" "$T_DIR/hold.log" "holder"

	local cmd
	for cmd in "" attach detach status stats reclaim "channel list" "endpoint list" daemon "daemon status" doctor; do
		# shellcheck disable=SC2086
		ctl_a $cmd --help >"$T_DIR/help.out" 2>&1 || fail "unetctl $cmd --help: exit $?"
		[[ -s $T_DIR/help.out ]] || fail "unetctl $cmd --help printed nothing"
	done
}

t_api_errors() {
	local bin=$BUILD/tests/test_api_errors
	[[ -x $bin ]] || fail "$bin not built"
	setup_ns 2
	T_MODE=skb
	attach a
	in_a env UNET_TEST_IFACE="$IF_A" UNET_TEST_PEER_MAC="$MAC_B" UNET_PIN_ROOT="$UNET_PIN_ROOT" \
		"$bin" >"$T_DIR/api.log" 2>&1
	local rc=$?
	cat "$T_DIR/api.log"
	((rc == 0)) || fail "test_api_errors exited with $rc"
	local passed
	passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$T_DIR/api.log" | tail -1)
	[[ ${passed:-0} -gt 0 ]] || skip "test_api_errors passed no test (all skipped)"
	grep -q '^\[  SKIPPED \]' "$T_DIR/api.log" && fail "test_api_errors skipped tests with an interface given"
	return 0
}

# scripts/bench.sh --quick: the form of its output, no timing asserted.
# It makes its own namespaces (recorded for the supervisor's rescue
# through UNET_NETNS_RECORD, which it inherits).
# unet-bench --vs: two transports on one interface (their own queues and
# tags) in one run: the echo serves both, the pingpong alternates blocks
# of round trips and reports each side's p50 and the ratio.
t_bench_vs() {
	local b=$BUILD/unet-bench out e ratio
	[[ -x $b ]] || skip "$b is not built"
	setup_ns 3
	T_MODE=skb
	attach a
	attach b
	# misuse: a kernel transport, the same tag twice, a role without it
	for args in "--transport udp --local 10.0.0.1:1 --remote 10.0.0.2:1 --vs unet" \
		"--transport uam --iface $IF_A --tag 1 --peer $MAC_B --peer-tag 2 --vs unet --vs-tag 1 --vs-peer-tag 3"; do
		# shellcheck disable=SC2086
		in_a "$b" pingpong $args --count 10 >/dev/null 2>"$T_DIR/err"
		(($? == 2)) || fail "pingpong $args: want exit 2"
		grep -q -- '--vs' "$T_DIR/err" || fail "pingpong $args: no error naming --vs: $(cat "$T_DIR/err")"
	done
	in_a "$b" sink --transport uam --iface "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--vs unet --vs-tag 3 --vs-peer-tag 4 >/dev/null 2>"$T_DIR/err"
	(($? == 2)) && grep -q 'echo and pingpong' "$T_DIR/err" || fail "sink --vs: not refused: $(cat "$T_DIR/err")"
	unet_bg_b "$b" echo --transport uam --tag 2 --peer "$MAC_A" --peer-tag 1 --iface "$IF_B" \
		--vs unet --vs-tag 4 --vs-peer-tag 3 --timeout 60 >"$T_DIR/echo.out" 2>"$T_DIR/echo.err"
	e=$UNET_BG_PID
	out=$(in_a "$b" pingpong --transport uam --tag 1 --peer "$MAC_B" --peer-tag 2 --iface "$IF_A" \
		--vs unet --vs-tag 3 --vs-peer-tag 4 --size 64 --count 3000 --vs-block 500 \
		--warmup 200 2>"$T_DIR/ping.err")
	echo "$out"
	cat "$T_DIR/ping.err"
	stop "$e" "$T_DIR/echo.err" "echo"
	jq -e '.transport == "uam" and .vs_transport == "unet" and .count == 3000 and
		.vs_count == 3000 and .lost == 0 and .vs_lost == 0 and .p50_us > 0 and
		.vs_p50_us > 0 and .vs_block == 500' <<<"$out" >/dev/null ||
		fail "pingpong --vs: not both sides' 3000 round trips with their p50s"
	ratio=$(jq -r '(.p50_ratio - .p50_us / .vs_p50_us) | fabs < 0.01' <<<"$out")
	[[ $ratio == true ]] || fail "p50_ratio is not p50_us / vs_p50_us"
	grep -q 'echo on uam and unet' "$T_DIR/echo.err" || fail "the echo did not serve both transports"
}

t_bench_smoke() {
	local out=$T_DIR/bench rc t m f
	# A form check: the sanitizers watch the same library paths in the
	# data-path tests (make check's time, README).
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (a form check)"
	[[ -x $BUILD/unet-bench ]] || skip "$BUILD/unet-bench is not built (bench/ sources, 'make bench')"
	command -v gnuplot >/dev/null || fail "gnuplot is missing (scripts/install-deps.sh installs gnuplot-nox)"
	bash "$ROOT/scripts/bench.sh" --quick --out "$out" "$BUILD" >"$T_DIR/bench.out" 2>"$T_DIR/bench.err"
	rc=$?
	echo "--- bench.sh stderr:"
	cat "$T_DIR/bench.err"
	echo "--- bench.sh stdout:"
	cat "$T_DIR/bench.out"
	((rc == 0)) || fail "bench.sh --quick exited with $rc: $(grep -m1 FAILED "$T_DIR/bench.err")"
	f=$out/results.json
	[[ -s $f ]] || fail "no $f"
	jq -e '.machine.kernel and .machine.nproc and .machine.date and .machine.xdp_mode
		and (.results | type == "array" and length > 0)' "$f" >/dev/null ||
		fail "results.json does not parse or lacks machine/results"
	for t in unet udp packet; do
		for m in spin block; do
			jq -e --arg t "$t" --arg m "$m" 'any(.results[]; .kind == "pingpong" and
				.transport == $t and .mode == $m and .size == 64 and .status == "ok" and
				(.p50_us | type) == "number" and .p50_us > 0)' "$f" >/dev/null ||
				fail "results.json has no 64-byte pingpong for $t $m with p50_us > 0"
		done
	done
	for t in unet udp udp-mmsg packet; do
		jq -e --arg t "$t" 'any(.results[]; .kind == "rate" and .transport == $t and
			.status == "ok" and (.msgs_per_s | type) == "number" and .msgs_per_s > 0)' \
			"$f" >/dev/null || fail "results.json has no rate entry for $t with msgs_per_s > 0"
	done
	jq -e '[.results[] | select(.kind == "demux-pingpong" and .status == "ok")] | length >= 2' \
		"$f" >/dev/null || fail "results.json lacks the demux entries (1 and 16 channels)"
	# UAM calls under injected loss: 6 rows, each with calls/s.
	jq -e '[.results[] | select((.kind | startswith("calls-")) and .status == "ok" and
		.calls_per_s > 0 and (.loss_ppm | type) == "number")] | length == 6' \
		"$f" >/dev/null || fail "results.json lacks the 6 UAM calls rows (0/1/10% loss, 1 and 16 in flight)"
	grep -q '^UAM calls/s' "$T_DIR/bench.out" || fail "the table has no UAM calls/s section"
	# UAM against raw U-Net interleaved (the round-trip target, UAM <= 1.15x raw):
	# a row per size with the ratio inside its range (printed to 0.01),
	# and the table's section with the target's verdict.
	jq -e '[.results[] | select(.kind == "vs" and .status == "ok" and .vs == "unet" and
		.p50_us > 0 and .vs_p50_us > 0 and .p50_ratio > 0 and
		.p50_ratio_min - 0.01 <= .p50_ratio and .p50_ratio <= .p50_ratio_max + 0.01)] | length == 2' \
		"$f" >/dev/null || fail "results.json lacks the 2 interleaved UAM/raw rows (64 and 1472 B)"
	grep -Eq '^  round trip p50, 1472 B: [0-9.]+x \[.*\(target <= 1.15x\)  (met|NOT met)$' "$T_DIR/bench.out" ||
		fail "the table has no interleaved UAM/raw row with its target"
	# Routable channels against raw ones: the round trip and the rate
	# beside raw unet's, and the round trip interleaved with a raw one's
	# (the target's row).
	for k in pingpong rate vs-routable; do
		jq -e --arg k "$k" 'any(.results[]; .kind == $k and .transport == "unet-routable" and
			.status == "ok" and ((.p50_us // 0) > 0 or (.msgs_per_s // 0) > 0))' "$f" >/dev/null ||
			fail "results.json has no $k row for unet-routable"
	done
	grep -Eq '^  routable msgs/s, 64 B +[0-9.]+x  \(target >= 0.90x\)  (met|NOT met)$' "$T_DIR/bench.out" ||
		fail "the table has no routable msgs/s target"
	jq -e 'any(.results[]; .kind == "rate-ab" and .status == "ok" and .msgs_per_s_ratio > 0 and
		.msgs_per_s_ratio_min <= .msgs_per_s_ratio and .msgs_per_s_ratio <= .msgs_per_s_ratio_max)' \
		"$f" >/dev/null || fail "results.json has no routable/raw rate row (rate-ab)"
	grep -Eq '^  msgs/s, 64 B: [0-9.]+x \[.*\(target >= 0.90x\)  (met|NOT met)$' "$T_DIR/bench.out" ||
		fail "the table has no routable/raw rate row with its target"
	jq -e 'any(.results[]; .kind == "vs-routable" and .aa_ratio > 0 and .p50_ratio_net > 0)' "$f" >/dev/null ||
		fail "the interleaved routable row has no raw/raw control (aa_ratio, p50_ratio_net)"
	grep -Eq '^  round trip p50, 64 B: [0-9.]+x \[.*, net [0-9.]+x  \(target <= 1.10x\)  (met|NOT met)$' "$T_DIR/bench.out" ||
		fail "the table has no interleaved routable/raw row with its target"
	# UAM bulk: stores and gets, at 0% and 1% loss, each row
	# with its ratio to raw streaming.
	jq -e '[.results[] | select((.kind | test("^bulk(-get)?(-1)?$")) and .status == "ok" and
		.gbit_s > 0 and (.op == "store" or .op == "get"))] | length == 4' \
		"$f" >/dev/null || fail "results.json lacks the 4 UAM bulk rows (store, get; 0 and 1% loss)"
	grep -Eq '^UAM bulk gets at 1% loss .*x raw unet 1472 B streaming' "$T_DIR/bench.out" ||
		fail "the table has no UAM bulk get row with its ratio to raw streaming"
	# The table: ratio columns, and ratios on the rows.
	grep -q 'x udp' "$T_DIR/bench.out" || fail "the table has no ratio column 'x udp'"
	grep -q 'x mmsg' "$T_DIR/bench.out" || fail "the table has no ratio column 'x mmsg'"
	grep -Eq '^unet +spin +64 +[0-9.]+ [0-9.]+x' "$T_DIR/bench.out" ||
		fail "the table's unet spin 64-byte row has no ratio to udp"
	grep -Eq '^unet +64 .* [0-9.]+x +[0-9.]+x' "$T_DIR/bench.out" ||
		fail "the table's unet 64-byte rate row has no ratios"
	# Waiting: adaptive rows with both sides' CPU and the wait counters;
	# LogP records with all four parameters; their table sections.
	for t in unet uam udp; do
		jq -e --arg t "$t" 'any(.results[]; .kind == "pingpong" and .transport == $t and
			.mode == "adaptive" and .status == "ok" and .p50_us > 0 and
			(.cpu_us_per_msg | type) == "number" and (.server.cpu_us_per_msg | type) == "number")' \
			"$f" >/dev/null || fail "results.json has no adaptive pingpong for $t with both sides' CPU"
	done
	jq -e 'any(.results[]; .kind == "pingpong" and .transport == "unet" and .mode == "adaptive" and
		(.wait_spin_hits | type) == "number" and (.wait_sleeps | type) == "number" and .spin_us > 0)' \
		"$f" >/dev/null || fail "the unet adaptive record has no wait counters"
	for t in unet uam unet-udp udp; do
		jq -e --arg t "$t" 'any(.results[]; .kind == "logp" and .transport == $t and .status == "ok" and
			.os_us > 0 and .or_us > 0 and .rtt_us > 0 and (.L_us | type) == "number" and .g_us > 0)' \
			"$f" >/dev/null || fail "results.json has no LogP record for $t with o_s, o_r, L, g"
	done
	grep -q '^Waiting, 64-byte round trips' "$T_DIR/bench.out" || fail "the table has no waiting section"
	grep -Eq '^unet +adaptive +[0-9.]+ +[0-9.]+x' "$T_DIR/bench.out" ||
		fail "the waiting section's unet adaptive row has no ratio to udp blocking"
	grep -Eq '^unet +64 +[0-9.-]+ +[0-9.-]+ +[0-9.-]+ +[0-9.-]+ +[0-9.]+$' "$T_DIR/bench.out" ||
		fail "the LogP section has no unet 64-byte row"
	for p in latency bandwidth logp; do
		[[ -s $out/$p.png ]] || fail "no $out/$p.png"
		[[ $(head -c 8 "$out/$p.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
			fail "$out/$p.png is not a PNG file"
	done
	note "results.json: $(jq '.results | length' "$f") records; plots are PNG"
}

# More receive queues than UNET_MAX_QUEUES (16): the XDP program serves
# queues 0-15 only, so frames on 16-19 would be dropped without a word;
# unetctl says so at attach and in status.
t_queue_limit() {
	setup_ns
	local x="${IF_A}x" y="${IF_A}y" out err
	in_a ip link add "$x" numrxqueues 20 numtxqueues 20 type veth peer name "$y" \
		numrxqueues 20 numtxqueues 20 || fail "cannot create a 20-queue veth"
	in_a ip link set "$x" up && in_a ip link set "$y" up || fail "cannot bring up $x/$y"
	out=$(ctl_a --json attach "$x" --mode skb 2>"$T_DIR/attach.err") ||
		{ cat "$T_DIR/attach.err"; fail "attach $x failed"; }
	err=$(cat "$T_DIR/attach.err")
	echo "attach: $out"
	echo "stderr: $err"
	[[ $(wc -l <"$T_DIR/attach.err") == 1 ]] || fail "attach: want one warning line on stderr, got: $err"
	grep -q "^unetctl: warning: $x has 20 receive queues, U-Net serves queues 0-15 only (UNET_MAX_QUEUES 16): frames arriving on queues 16-19 are dropped" \
		<<<"$err" || fail "attach warning does not name $x, 20 queues and the limit: $err"
	[[ $(jq -r .device_queues <<<"$out") == 20 && $(jq -r .queues <<<"$out") == 16 ]] ||
		fail "attach: want queues 16, device_queues 20: $out"
	out=$(ctl_a --json status "$x") || fail "status $x failed"
	echo "status: $out"
	[[ $(jq -r .device_queues <<<"$out") == 20 ]] || fail "status: device_queues is not 20"
	jq -r .warning <<<"$out" | grep -q "^$x has 20 receive queues.*UNET_MAX_QUEUES 16" ||
		fail "status has no warning naming $x and the limit"
	ctl_a status "$x" | grep -q "^warning: $x has 20 receive queues" || fail "text status shows no warning"
	# One queue: no warning anywhere.
	ctl_a attach "$IF_A" --mode skb >/dev/null 2>"$T_DIR/attach1.err" || fail "attach $IF_A failed"
	[[ ! -s $T_DIR/attach1.err ]] || fail "attach of a 1-queue device printed: $(cat "$T_DIR/attach1.err")"
	out=$(ctl_a --json status "$IF_A") || fail "status $IF_A failed"
	[[ $(jq -r '.device_queues' <<<"$out") == 1 && $(jq -r '.warning // "none"' <<<"$out") == none ]] ||
		fail "1-queue status: $out"
}

# The build honours the user's CFLAGS (project flags are separate), and an
# installed tree under a prefix that is no default include path works
# with the flags pkg-config gives, as the README says.
t_install_build() {
	local b=$T_DIR/build-o1 dest=$T_DIR/dest prefix=/opt/unet-test pc cflags libs
	# Its build is its own (-O1), whatever the pass: once is enough.
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (its own -O1 build)"
	# On every CPU: the build is what takes the time, the flags are what it checks.
	local jobs
	jobs=-j$(nproc)
	make -s "$jobs" -C "$ROOT" BUILD="$b" CFLAGS="-O1 -g" "$b/libunet-xdp.a" "$b/unetctl" \
		>"$T_DIR/make.log" 2>&1 || { cat "$T_DIR/make.log"; fail "make CFLAGS=\"-O1 -g\" failed"; }
	make -n -B -C "$ROOT" BUILD="$b" CFLAGS="-O1 -g" "$b/lib/core/wire.o" |
		grep -- '-O1 -g' | grep -q -- '-Wall' ||
		fail "the compile line lacks the user's -O1 -g or the project's -Wall"
	# Objects depend on the headers they include (-MMD): a changed header
	# rebuilds them, an unrelated one does not.
	make -n -C "$ROOT" BUILD="$b" CFLAGS="-O1 -g" -W lib/core/objects.h "$b/lib/core/datapath.o" |
		grep -q -- '-c lib/core/datapath.c' || fail "lib/core/objects.h changed, datapath.o not rebuilt"
	! make -n -C "$ROOT" BUILD="$b" CFLAGS="-O1 -g" -W lib/uam/uam_impl.h "$b/lib/core/datapath.o" |
		grep -q -- '-c lib/core/datapath.c' || fail "lib/uam/uam_impl.h changed, core's datapath.o rebuilt"
	make -s "$jobs" -C "$ROOT" BUILD="$b" PREFIX="$prefix" DESTDIR="$dest" install \
		>>"$T_DIR/make.log" 2>&1 || { cat "$T_DIR/make.log"; fail "make install failed"; }
	pc=$dest$prefix/lib/pkgconfig
	[[ -f $pc/libunet-xdp.pc ]] || fail "no libunet-xdp.pc under $pc"
	[[ -f $dest$prefix/include/unet-xdp/unet.h ]] || fail "unet.h not installed under include/unet-xdp"
	# The .pc names the real prefix; the files sit under DESTDIR.
	cflags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags libunet-xdp) ||
		fail "pkg-config --cflags failed"
	libs=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --libs --static libunet-xdp) ||
		fail "pkg-config --libs failed"
	echo "cflags: $cflags; libs: $libs"
	[[ $cflags == *"-I$dest$prefix/include"* && $cflags != *unet-xdp* ]] ||
		fail "pkg-config --cflags gives '$cflags', want -I<prefix>/include"
	# shellcheck disable=SC2086 # word splitting of the flags is meant
	cc $cflags -o "$T_DIR/pingpong" "$ROOT/examples/pingpong.c" $libs -lm \
		>"$T_DIR/cc.log" 2>&1 || { cat "$T_DIR/cc.log"; fail "examples/pingpong.c does not build against the installed tree"; }
	[[ -x $T_DIR/pingpong ]] || fail "no binary from the installed tree"
}
