# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_parallel.sh - MPI programs on namespace hosts (docs/parallel.md):
# scripts/hosts.sh itself, and the programs of examples/parallel under
# Open MPI over the `unet` libfabric provider on 4 hosts, at 2% loss,
# and with a rank killed mid-run.  Sourced by run.sh (see lib.sh).
#
# The provider tests need BUILD/libunet-fi.so, which `make` builds: a
# missing provider fails them (it is a broken build, not a missing
# kernel feature).  UNET_PAR_NET=ofi-tcp|ofi-udp|tcp runs the same
# provider tests over another transport instead (development: it is how
# the programs were checked before the provider existed; over the
# kernel's paths the kill test hangs and fails, see docs/parallel.md).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"parallel_hosts|-|90|scripts/hosts.sh: 4 hosts on a bridge, U-Net frames (0x88B5) cross it, an MPI job over the tcp BTL on 4 distinct hosts, time limit kills a job, down/run leave nothing behind"
	"parallel_progs|-|150|every examples/parallel program under mpirun over the unet provider on 4 namespace hosts verifies its result"
	"parallel_loss|-|90|sample sort with one message per key over the unet provider on 4 hosts at 2% injected loss verifies its result"
	"parallel_bench_smoke|-|120|make bench-parallel's form (--quick, tcp BTL only): every program's record in results.json (ring, all-to-all and ping-pong on 4 ranks too), the table with its ratio columns and targets, both plots"
	"parallel_kill|-|120|a rank SIGKILLed mid-run over the unet provider: each of the 3 survivors leaves with an MPI error within 30 s, no hang"
)

HOSTS_SH=$ROOT/scripts/hosts.sh


# par_up N: N hosts for this test (name in PAR_NAME), removed at the end.
par_up() {
	command -v mpirun >/dev/null || fail "mpirun missing (openmpi-bin: make deps)"
	[[ -x $BUILD/parallel/cg ]] || fail "$BUILD/parallel/* not built (mpicc missing? make deps)"
	grep -qw bpf /proc/filesystems || skip "this kernel has no bpffs"
	PAR_NAME="p$$"
	T_CLEANUP+=("\"$HOSTS_SH\" down $PAR_NAME")
	"$HOSTS_SH" up "$1" --name "$PAR_NAME" --build "$BUILD" --mode skb >"$T_DIR/up.log" 2>&1 ||
		{ cat "$T_DIR/up.log"; fail "hosts.sh up $1 failed"; }
	note "hosts $PAR_NAME: $1 namespaces on bridge ${PAR_NAME}br"
	par_no_leak_check
}

# Open MPI's own allocations are not ours to leak-check (SAN build): the
# ranks run with ASan and UBSan, without LeakSanitizer.
par_no_leak_check() {
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# par_net: the transport of the provider tests; fails without the provider.
par_net() {
	PAR_NET=${UNET_PAR_NET:-unet}
	if [[ $PAR_NET == unet ]]; then
		[[ -f $BUILD/libunet-fi.so ]] || fail "the unet provider $BUILD/libunet-fi.so is not built"
	fi
	note "transport $PAR_NET"
}

# par_job LOG TIMEOUT [HOSTS.SH MPIRUN OPTIONS] -- PROG ARGS: one MPI job on
# the test's hosts over $PAR_NET; it must exit 0 and rank 0 must print a
# RESULT line with "ok":true.
par_job() {
	local log=$1 t=$2 rc job
	shift 2
	job="$*"
	job=${job##*-- }
	"$HOSTS_SH" mpirun "$PAR_NAME" --net "${PAR_NET:-tcp}" --timeout "$t" "$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	((rc == 0)) || fail "job '${job##*/}' over ${PAR_NET:-tcp} exited with $rc"
	grep -q '^RESULT .*"ok":true' "$log" || fail "job '${job##*/}' printed no RESULT ok line"
}

# par_counter K NAME: a counter of host K's eth0.
par_counter() {
	local v
	v=$("$HOSTS_SH" exec "$PAR_NAME" "$1" -- "$UNETCTL" --json stats eth0 |
		jq -r --arg k "$2" '[.. | objects | select(has($k)) | .[$k]] | first // empty')
	[[ $v =~ ^[0-9]+$ ]] || fail "no counter $2 on host $1 (got '$v')"
	echo "$v"
}

t_parallel_hosts() {
	par_up 4
	local n k names mac1 mac4 s
	n=$(ip netns list | awk '{print $1}' | grep -c "^${PAR_NAME}\(br\|h[0-9]\)$")
	((n == 5)) || fail "want 5 namespaces (bridge + 4 hosts), have $n"
	for k in 1 2 3 4; do
		"$HOSTS_SH" exec "$PAR_NAME" "$k" -- "$UNETCTL" status eth0 | grep -q '^attached: yes' ||
			fail "unet program not attached on host $k"
	done
	# U-Net frames cross the bridge: the pingpong example h1 <-> h4.
	mac1=$("$HOSTS_SH" exec "$PAR_NAME" 1 -- cat /sys/class/net/eth0/address)
	mac4=$("$HOSTS_SH" exec "$PAR_NAME" 4 -- cat /sys/class/net/eth0/address)
	"$HOSTS_SH" exec "$PAR_NAME" 4 -- "$BUILD/examples/pingpong" server eth0 --tag 5 --peer "$mac1" \
		--peer-tag 6 --count 200 --timeout 20 >"$T_DIR/pps.log" 2>&1 &
	s=$!
	sleep 0.3
	"$HOSTS_SH" exec "$PAR_NAME" 1 -- "$BUILD/examples/pingpong" client eth0 --tag 6 --peer "$mac4" \
		--peer-tag 5 --count 200 --size 64 --timeout 20 >"$T_DIR/ppc.log" 2>&1 ||
		{ cat "$T_DIR/ppc.log" "$T_DIR/pps.log"; fail "U-Net pingpong across the bridge failed"; }
	wait "$s" || { cat "$T_DIR/pps.log"; fail "U-Net pingpong server failed"; }
	cat "$T_DIR/ppc.log"
	grep -q 'lost=0' "$T_DIR/ppc.log" || fail "U-Net pingpong across the bridge lost messages"
	# An MPI job: one rank on each of 4 distinct hosts.
	PAR_NET=tcp
	"$HOSTS_SH" mpirun "$PAR_NAME" --net tcp --timeout 60 -- hostname >"$T_DIR/hostname.log" 2>&1 ||
		{ cat "$T_DIR/hostname.log"; fail "mpirun hostname failed"; }
	names=$(grep "^${PAR_NAME}h[1-4]$" "$T_DIR/hostname.log" | sort -u | wc -l)
	((names == 4)) || { cat "$T_DIR/hostname.log"; fail "want 4 distinct host names, got $names"; }
	par_job "$T_DIR/cg.log" 60 -- "$BUILD/parallel/cg" --grid 64
	# 4 ranks on this machine's 2 CPUs wait on each other in turn: a
	# livelock or a lost wake-up would run into the limit, which is 100
	# times what the ring takes here.
	par_job "$T_DIR/ring.log" 60 -- "$BUILD/parallel/mpi_ring" --rounds 500 --a2a-iters 5
	# What follows is hosts.sh's own (a shell script's time limit and
	# teardown, around unetctl attach, which every test runs): the
	# sanitizers' pass has nothing to watch in it.
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		note "the time limit and teardown are checked in the plain pass of make check (hosts.sh, no code of ours under the sanitizers)"
		return 0
	fi
	# The time limit ends a job that runs too long, and nothing stays.
	local t0=$SECONDS rc
	"$HOSTS_SH" mpirun "$PAR_NAME" --net tcp --timeout 5 -- sleep 100 >"$T_DIR/sleep.log" 2>&1
	rc=$?
	((rc == 124)) || { cat "$T_DIR/sleep.log"; fail "a job over its time limit exited $rc, want 124"; }
	((SECONDS - t0 <= 15)) || fail "the 5 s time limit took $((SECONDS - t0)) s"
	for k in 1 2 3 4; do
		[[ -z $(ip netns pids "${PAR_NAME}h$k") ]] || fail "processes left on host $k after the time limit"
	done
	# down removes everything; so does run, whatever the job's status.
	"$HOSTS_SH" down "$PAR_NAME"
	n=$(ip netns list | awk '{print $1}' | grep -c "^${PAR_NAME}")
	((n == 0)) || fail "$n namespaces left after down"
	grep -q "/unet-hosts/$PAR_NAME/" /proc/mounts && fail "bpffs mounts left after down"
	[[ ! -e /tmp/unet-hosts/$PAR_NAME ]] || fail "state directory left after down"
	"$HOSTS_SH" run 2 --name "${PAR_NAME}r" --build "$BUILD" --net tcp --timeout 60 -- false >"$T_DIR/run.log" 2>&1 &&
		fail "hosts.sh run of a failing program exited 0"
	n=$(ip netns list | awk '{print $1}' | grep -c "^${PAR_NAME}r")
	((n == 0)) || fail "$n namespaces left after hosts.sh run"
}

t_parallel_progs() {
	par_net
	par_up 4
	par_job "$T_DIR/pingpong.log" 60 -- "$BUILD/parallel/mpi_pingpong" --iters 200 --maxsize 65536
	par_job "$T_DIR/allreduce.log" 60 -- "$BUILD/parallel/mpi_allreduce" --iters 200
	par_job "$T_DIR/mm.log" 60 -- "$BUILD/parallel/mm" --blocks 4 --bsize 16
	par_job "$T_DIR/ssort-bulk.log" 60 -- "$BUILD/parallel/ssort" --keys 4096
	par_job "$T_DIR/ssort-small.log" 60 -- "$BUILD/parallel/ssort" --mode small --keys 1024
	par_job "$T_DIR/rsort-bulk.log" 60 -- "$BUILD/parallel/rsort" --keys 4096
	par_job "$T_DIR/rsort-small.log" 60 -- "$BUILD/parallel/rsort" --mode small --keys 512
	par_job "$T_DIR/cc.log" 60 -- "$BUILD/parallel/cc" --rows 128 --cols 128
	par_job "$T_DIR/cg.log" 60 -- "$BUILD/parallel/cg" --grid 64
	# The messages went through U-Net: every host's XDP program handed
	# frames to AF_XDP sockets.
	if [[ $PAR_NET == unet ]]; then
		local k d
		for k in 1 2 3 4; do
			d=$(par_counter "$k" delivered)
			((d >= 1000)) || fail "host $k's XDP program delivered only $d U-Net frames"
			note "host $k: $d U-Net frames delivered"
		done
	fi
}

t_parallel_loss() {
	par_net
	par_up 4
	"$HOSTS_SH" fault "$PAR_NAME" 20000 || fail "setting 2% loss failed"
	par_job "$T_DIR/ssort-small.log" 70 -- "$BUILD/parallel/ssort" --mode small --keys 1024
	local k d=0
	for k in 1 2 3 4; do
		d=$((d + $(par_counter "$k" drop_injected)))
	done
	((d > 0)) || fail "no frame was dropped by the injected loss"
	note "frames dropped by the injected loss: $d"
}

t_parallel_kill() {
	# What it checks is the launcher's and hosts.sh's handling of a
	# killed rank; the provider runs under the sanitizers in the other
	# parallel and fabric tests.
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (the launcher's kill, not our code)"
	par_net
	par_up 4
	# --enable-recovery: Open MPI's launcher does not end the job when a
	# rank dies; orte_abort_on_non_zero_status 0: nor when the first
	# survivor leaves with its error (it would kill the others before
	# they report theirs).  So what ends each survivor is MPI (the
	# network), or nothing (a hang, which the 30 s bound turns into a
	# failure).  The provider takes a peer that acknowledges nothing for
	# FI_UNET_TIMEOUT_MS for dead: 3 s instead of its 10 (fabric_dead
	# runs with 1 s); the ranks call MPI back to back, none is silent
	# that long while it lives.
	"$HOSTS_SH" mpirun "$PAR_NAME" --net "$PAR_NET" --timeout 100 --enable-recovery \
		--mca orte_abort_on_non_zero_status 0 -x FI_UNET_TIMEOUT_MS=3000 \
		-- "$BUILD/parallel/mpi_allreduce" --soak 90 >"$T_DIR/soak.log" 2>&1 &
	local job=$! i victim="" t0 rc errs
	for ((i = 0; i < 300; i++)); do
		grep -q '^soak running' "$T_DIR/soak.log" && break
		kill -0 "$job" 2>/dev/null || { cat "$T_DIR/soak.log"; fail "the job ended before it ran"; }
		sleep 0.1
	done
	grep -q '^soak running' "$T_DIR/soak.log" || { cat "$T_DIR/soak.log"; fail "the job did not start in 30 s"; }
	sleep 1
	for i in $(ip netns pids "${PAR_NAME}h3"); do
		[[ $(cat "/proc/$i/comm" 2>/dev/null) == mpi_allreduce ]] && victim=$i
	done
	[[ -n $victim ]] || fail "no rank found on host 3"
	note "SIGKILL rank on host 3 (pid $victim)"
	kill -KILL "$victim"
	t0=$SECONDS
	while kill -0 "$job" 2>/dev/null && ((SECONDS - t0 < 30)); do
		sleep 0.2
	done
	if kill -0 "$job" 2>/dev/null; then
		cat "$T_DIR/soak.log"
		fail "the survivors still run 30 s after a rank was killed (hang)"
	fi
	wait "$job"
	rc=$?
	cat "$T_DIR/soak.log"
	# (Under --enable-recovery mpirun's own status is 0 even then: what
	# counts is what each survivor says.)
	note "job ended $((SECONDS - t0)) s after the kill, exit $rc"
	((rc != 124)) || fail "the job ran into its time limit"
	grep -q '^RESULT' "$T_DIR/soak.log" && fail "the job reported success with a rank killed"
	errs=$(grep '^rank [0-9]*: MPI error' "$T_DIR/soak.log" | sort -u -k2,2 | wc -l)
	((errs == 3)) || fail "$errs of the 3 survivors reported an MPI error, want all 3"
	for i in 1 2 4; do
		[[ -z $(ip netns pids "${PAR_NAME}h$i" 2>/dev/null | while read -r p; do
			[[ $(cat "/proc/$p/comm" 2>/dev/null) == mpi_allreduce ]] && echo "$p"
		done) ]] || fail "a survivor on host $i is still alive"
	done
}

# The benchmark's form, over the tcp BTL only (no provider needed): every
# program's record, the table, the targets' lines, the plots.
t_parallel_bench_smoke() {
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (the bench's output form, not our code under the sanitizers)"
	command -v mpirun >/dev/null || fail "mpirun missing (openmpi-bin: make deps)"
	local out=$T_DIR/bench p n
	par_no_leak_check
	"$ROOT/scripts/bench-parallel.sh" --quick --nets tcp --out "$out" "$BUILD" >"$T_DIR/bench.log" 2>&1 ||
		{ cat "$T_DIR/bench.log"; fail "bench-parallel.sh --quick --nets tcp failed"; }
	cat "$out/table.txt"
	for p in pingpong allreduce mm ssort-bulk ssort-small rsort-bulk rsort-small cc cg; do
		n=$(jq --arg p "$p" '[.results[] | select(.net == "tcp" and .prog == $p and (.failed | not))] | length' \
			"$out/results.json")
		((n >= 1)) || fail "results.json has no tcp record of $p"
	done
	n=$(jq '[.results[] | select(.prog == "pingpong" and .ranks == 2 and .size != null)] | length' "$out/results.json")
	((n == 5)) || fail "want 5 ping-pong sizes (8 B .. 4 KiB) on 2 ranks, got $n"
	n=$(jq '[.results[] | select(.prog == "pingpong" and .ranks == 4 and .size == 65536)] | length' "$out/results.json")
	((n == 1)) || fail "want the 64 KiB ping-pong on 4 ranks, got $n records"
	for p in ring alltoall; do
		n=$(jq --arg p "$p" '[.results[] | select(.net == "tcp" and .prog == $p and .ranks == 4 and ((.p50_us // .hop_p50_us) != null))] | length' \
			"$out/results.json")
		((n == 1)) || fail "results.json has no 4-rank tcp figure of $p"
	done
	for r in 'ring hop p50 us, 4 ranks' 'alltoall p50 us, 65536 B, 4 ranks' 'pingpong MB/s, 65536 B, 4 ranks'; do
		grep -q "^$r " "$out/table.txt" || fail "table has no row '$r'"
	done
	grep -q '^figure .*tcp .*unet/ofi-tcp .*unet/tcp' "$out/table.txt" || fail "table header lacks the ratio columns"
	grep -q '^cg ms ' "$out/table.txt" || fail "table has no cg row"
	grep -q '^target ping-pong p50 8 B <= 0.6x ofi-tcp: NOT MEASURED' "$out/table.txt" ||
		fail "the ping-pong target line is missing"
	n=$(grep -c '^target .* faster over unet than ofi-tcp' "$out/table.txt")
	((n == 7)) || fail "want 7 Split-C target lines, got $n"
	[[ -s $out/latency.png && -s $out/splitc.png ]] || fail "a plot is missing"
}
