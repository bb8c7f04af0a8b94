#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench.sh [--quick] [--out DIR] BUILD_DIR - `make bench`: U-Net against
# the kernel's paths, side by side, in one run on one veth link.
#
# Makes two network namespaces joined by a veth pair (scripts/netns.sh),
# attaches the XDP program to both ends (skb mode, or --xdp-mode, and says
# so), then measures with BUILD_DIR/unet-bench, every process pinned
# (server/receiver on CPU 1, client/sender on CPU 0):
#
#   latency   round trips (min p50 p90 p99 p99.9 max) for unet, udp and
#             packet, payloads 8 64 256 1024 1472, spinning and blocking;
#             sockperf ping-pong (kernel UDP, an independent program) at
#             the same sizes (it refuses < 14 bytes), spinning and blocking
#   rate      one-way messages/s and Gbit/s with batched sends for unet,
#             udp (send/recv), udp-mmsg and packet at the same sizes
#             (median of 3 pairings, BENCH_RATE_REPS)
#   demux     unet 64-byte round trip and message rate with 1, 16, 256
#             and 4096 channels open
#   emulated  unet-emul: the same U-Net round trips (spinning and
#             blocking, every size) with the b side an emulated endpoint:
#             unet-bench run as nobody, served by a unetd started in
#             namespace b for the measurement (its default --spin-us,
#             not pinned); unet-emul-nospin, spinning only: the daemon
#             with --spin-us 0 (it sleeps between frames: two spinning
#             processes and a sleeping daemon on 2 CPUs instead of three
#             spinners); and the 64-byte rate through the daemon both
#             ways: unet-emul (the daemon receives for a nobody sink) and
#             unet-emul-tx (a nobody source, every frame copied and
#             checked by the daemon before it leaves)
#   waiting   64-byte round trips in adaptive mode (spin up to the
#             library's default budget, then sleep) for unet, uam,
#             unet-udp and unet-emul, beside spin and block; kernel UDP
#             with SO_BUSY_POLL (udp adaptive: veth as set up, which has
#             no NAPI context, so busy polling cannot run; udp-napi: the
#             same with veth's NAPI turned on for that measurement,
#             ethtool gro + rx-udp-gro-forwarding, blocking and busy
#             polling); CPU per round trip on both sides
#   vs        uam against unet interleaved in one process pair
#             (unet-bench pingpong --vs, through scripts/bench-rtt-ab.sh
#             on a three-queue veth of its own): the median of
#             BENCH_VS_REPS runs' ratios of the p50s, at every size (the
#             pingpong rows run them a second apart: tens of percent of
#             noise in their ratio)
#   routable  a routable channel (unet-routable: U-Net inside UDP/IPv4,
#             unet-bench --peer-ip) against a raw one on the same link:
#             64-byte round trip and rate rows beside unet's; the round
#             trip interleaved (vs-routable, bench-rtt-ab.sh --routable,
#             net of a raw/raw run the same way) and the rate in pairings
#             taken in turn (rate-ab), the rows the targets are read from
#   tcp       TCP over U-Net (unet-tcp, both ends) against kernel TCP:
#             64-byte round trips, one connection's bulk (1472-byte
#             writes) at MTU 1500 and again with the link at MTU 9000
#             (rate-jumbo), with the ratios; and raw U-Net streaming of
#             8992-byte messages at MTU 9000 against that kernel TCP bulk
#   txcsum    unet-udp (64 and 1472 bytes) and unet-tcp (bulk) rates with
#             transmit checksums asked of the device (the default, where
#             the kernel has AF_XDP TX metadata) against the same computed
#             in software (unet-udp-sw, unet-tcp-sw), with the ratios
#   logp      LogP (unet-bench logp against a spinning echo): o_s, o_r,
#             rtt and L = rtt/2 - o_s - o_r for unet, uam, unet-udp and
#             udp at every size; g = 1 / msgs_per_s of the same run's
#             rate measurement
#   routed    across a router: namespace b routes between a's subnet and
#             a third namespace c's (scripts/netns.sh unet_netns_router,
#             the tests' routed fixture), the server in c: a routable
#             channel (unet-routable) and UDP over U-Net (unet-udp, both
#             ends) against kernel UDP through the same router, 64-byte
#             round trips spinning and blocking, rates at 64 and 1464
#             bytes (a routable channel's largest message at MTU 1500),
#             udp-mmsg beside udp, with the ratios and the one-link
#             targets of raw U-Net against kernel UDP
#   ipv6      UDP over U-Net on IPv6 (unet-udp, [fd00:201::1] -- [::2] on
#             the same link, IPv6 turned on for these rows) against kernel
#             UDP/IPv6: 64-byte round trips spinning and blocking, rates
#             at 64 and 1452 bytes (IPv6's largest at MTU 1500), with the
#             ratios and IPv6 over IPv4 for unet-udp
#
# and writes DIR/results.json ({"machine": {...}, "results": [...]}),
# DIR/table.txt (the table it prints: every figure with its ratio to
# kernel UDP in the same run, and where the targets stand),
# DIR/latency.png, DIR/bandwidth.png and DIR/logp.png
# (gnuplot).  Progress goes to stderr.  Every measurement has a time
# limit; one that fails is reported as failed in the table and the JSON
# and the run goes on; the script exits 1 at the end if anything failed,
# 2 on usage errors.
#
#   --quick     a few hundred messages, sizes 64 and 1472 (LogP: 64; sockperf: 64, spinning), channels 1 and
#               16: the smoke test's form check (about a minute); without
#               the routed and ipv6 rows (their cost, at the plan)
#   --out DIR   where to write (default bench-results/)
#   --xdp-mode native|skb
#               how the XDP program is attached (default skb: on veth,
#               AF_XDP copy mode is faster through generic XDP than through
#               veth's native XDP, which first copies every frame sent by
#               an AF_XDP socket into a page-pool buffer; docs/performance.md)
#
# Environment (full runs): BENCH_PP_COUNT (round trips per point, 20000;
# unet-emul spinning at most BENCH_EMUL_SPIN_COUNT, 1000),
# BENCH_PP_WARMUP (1000), BENCH_RATE_COUNT
# (messages per rate pairing; default per transport and size),
# BENCH_RATE_REPS (3), BENCH_SP_SECS (sockperf seconds, 2), BENCH_LOGP_COUNT
# (samples per LogP point, 5000), BENCH_VS_REPS (interleaved runs per vs
# row, 5), BENCH_VS_COUNT (round trips per run and transport, 20000),
# BENCH_ONLY (a regular expression: only
# the measurements it matches, see below), BENCH_TIMEOUT
# (seconds per measurement, 60); BENCH_KEEP_LOGS=1 keeps every log.
#
# Needs root.  Everything it creates is removed on exit, even on failure.
set -uo pipefail
# What we create for the run (namespaces' /run/netns, pin roots, logs
# other users' programs write beside) gets ordinary modes, whatever the
# caller's umask (077 is common for root).
umask 022

# The whole script is one compound command, read before it runs: editing
# the file during a run cannot change what the run does.
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")

usage() {
	echo "usage: $0 [--quick] [--out DIR] [--xdp-mode native|skb] BUILD_DIR"
}

QUICK=0
WANT_XDP_MODE=skb
OUT=""
BUILD=""
while (($#)); do
	case $1 in
	--quick) QUICK=1; shift ;;
	--out)
		[[ $# -ge 2 && -n $2 ]] || { echo "bench: --out needs a directory" >&2; usage >&2; exit 2; }
		OUT=$2
		shift 2
		;;
	--xdp-mode)
		[[ $# -ge 2 && ( $2 == native || $2 == skb ) ]] ||
			{ echo "bench: --xdp-mode needs native or skb" >&2; usage >&2; exit 2; }
		WANT_XDP_MODE=$2
		shift 2
		;;
	-h | --help) usage; exit 0 ;;
	-*) echo "bench: unknown option $1" >&2; usage >&2; exit 2 ;;
	*)
		[[ -z $BUILD ]] || { echo "bench: one BUILD_DIR only" >&2; usage >&2; exit 2; }
		BUILD=$1
		shift
		;;
	esac
done
[[ -n $BUILD ]] || { usage >&2; exit 2; }
[[ $BUILD = /* ]] || BUILD="$PWD/$BUILD"
OUT=${OUT:-$ROOT/bench-results}
[[ $OUT = /* ]] || OUT="$PWD/$OUT"

die() {
	echo "bench: $*" >&2
	exit 1
}

for b in unet-bench unetctl unetd; do
	[[ -x $BUILD/$b ]] || die "missing $BUILD/$b: run 'make all' first"
done
[[ $(id -u) -eq 0 ]] || die "needs root (namespaces, XDP, AF_XDP)"
for c in jq awk gnuplot taskset timeout; do
	command -v "$c" >/dev/null 2>&1 || die "missing $c (scripts/install-deps.sh installs it)"
done
HAVE_SOCKPERF=0
command -v sockperf >/dev/null 2>&1 && HAVE_SOCKPERF=1
NCPU=$(nproc)
((NCPU >= 2)) || die "needs 2 CPUs (client on CPU 0, server on CPU 1); this machine has $NCPU"
mkdir -p "$OUT" || die "cannot create $OUT"

# ---- what to measure ------------------------------------------------------

if ((QUICK)); then
	SIZES=(64 1472)
	CHANNELS=(1 16)
	PP_COUNT=300		# round trips per point
	PP_WARMUP=50
	RATE_COUNT=5000		# messages per rate point
	RATE_REPS=1		# pairings per rate point (the median is kept)
	SP_SECS=1		# sockperf seconds per point
	TO=20			# time limit of one measurement, s
	BULK_BYTES=1048576 BULK_COUNT=4	# UAM bulk stores
	LOGP_COUNT=300		# LogP samples per point
	CALLS_COUNT=2000	# UAM calls per loss point (a quarter with 1 in flight)
	VS_REPS=1 VS_COUNT=2000	# UAM against raw U-Net interleaved: runs, round trips
else
	SIZES=(8 64 256 1024 1472)
	CHANNELS=(1 16 256 4096)
	PP_COUNT=${BENCH_PP_COUNT:-20000}
	PP_WARMUP=${BENCH_PP_WARMUP:-1000}
	RATE_COUNT=""		# per transport: see rate_count
	RATE_REPS=${BENCH_RATE_REPS:-3}
	SP_SECS=${BENCH_SP_SECS:-2}
	TO=${BENCH_TIMEOUT:-60}
	BULK_BYTES=4194304 BULK_COUNT=${BENCH_BULK_COUNT:-50}
	LOGP_COUNT=${BENCH_LOGP_COUNT:-5000}
	CALLS_COUNT=${BENCH_CALLS_COUNT:-40000}
	VS_REPS=${BENCH_VS_REPS:-5} VS_COUNT=${BENCH_VS_COUNT:-20000}
fi
BATCH=32		# messages per send call (sendmmsg / TX ring kick)
EMUL_SPIN_COUNT=${BENCH_EMUL_SPIN_COUNT:-1000}	# unet-emul spinning: round trips of ~8 ms
SRV_CPU=1
CLI_CPU=0
TAG_A=1 TAG_B=2		# unet tags, namespace a (client) and b (server)
PORT_A=5001 PORT_B=5002	# udp ports
SP_PORT=11111		# sockperf
IPERF_PORT=11112	# iperf3

# rate_count TRANSPORT SIZE: messages for one rate point, about 1-2 s at
# the rates seen on a 2-vCPU VM (BENCH_RATE_COUNT overrides).
rate_count() {
	if [[ -n $RATE_COUNT ]]; then
		echo "$RATE_COUNT"
		return
	fi
	if [[ -n ${BENCH_RATE_COUNT:-} ]]; then
		echo "$BENCH_RATE_COUNT"
		return
	fi
	local small=$(($2 <= 256))
	case $1 in
	unet) ((small)) && echo 2000000 || echo 600000 ;;
	uam) ((small)) && echo 600000 || echo 300000 ;;
	udp) ((small)) && echo 500000 || echo 200000 ;;
	unet-udp | unet-udp-sw) ((small)) && echo 1000000 || echo 400000 ;;
	unet-emul | unet-emul-tx) ((small)) && echo 500000 || echo 200000 ;;
	udp-mmsg) ((small)) && echo 800000 || echo 300000 ;;
	packet) ((small)) && echo 800000 || echo 600000 ;;
	*) echo 500000 ;;
	esac
}

# The plan: one line per measurement, "kind transport mode size channels".
PLAN=()
for mode in spin block; do
	for size in "${SIZES[@]}"; do
		for t in unet unet-emul uam udp unet-udp packet; do
			PLAN+=("pingpong $t $mode $size 1")
		done
		[[ $mode == spin ]] && PLAN+=("pingpong unet-emul-nospin $mode $size 1")
		((size == 64)) && PLAN+=("pingpong unet-grant $mode $size 1")
		# sockperf spends 3 s starting each run: --quick (a form check)
		# runs it once, spinning at 64 bytes (blocking differs only by
		# sockperf's --nonblocked, the row's parsing is the same).
		if ((HAVE_SOCKPERF && size >= 14)) && { ((!QUICK)) || [[ $size == 64 && $mode == spin ]]; }; then
			PLAN+=("sockperf udp $mode $size 1")
		fi
	done
done
# UAM against raw U-Net interleaved in one process pair (m_vs): the rows
# the UAM round-trip target (<= 1.15x raw U-Net) is read from.
for size in "${SIZES[@]}"; do
	PLAN+=("vs uam spin $size 1")
done
for size in "${SIZES[@]}"; do
	for t in unet uam udp udp-mmsg unet-udp packet; do
		PLAN+=("rate $t spin $size 1")
	done
done
PLAN+=("rate unet-emul spin 64 1" "rate unet-emul-tx spin 64 1" "rate unet-grant spin 64 1")
# Routable channels (U-Net inside UDP/IPv4) on the same link, against
# the raw unet rows of this run; the round trip also interleaved with a
# raw channel's in one process pair (m_vs_routable: the target's row).
PLAN+=("pingpong unet-routable spin 64 1" "rate unet-routable spin 64 1"
	"vs-routable unet-routable spin 64 1" "rate-ab unet-routable spin 64 1")
PLAN+=("bulk uam spin 1472 1" "bulk-1 uam spin 1472 1" "bulk-get uam spin 1472 1" "bulk-get-1 uam spin 1472 1")
# UAM calls/s under injected loss: kind calls-LOSS% , channels
# field = calls in flight.
for depth in 1 16; do
	for loss in 0 1 10; do
		PLAN+=("calls-$loss uam spin 64 $depth")
	done
done
for ch in "${CHANNELS[@]}"; do
	PLAN+=("demux-pingpong unet spin 64 $ch")
	PLAN+=("demux-rate unet spin 64 $ch")
done
# Waiting: adaptive (spin, then sleep) beside the spin and block rows
# above; kernel UDP busy polling, also with veth's NAPI on (udp-napi).
for t in unet uam unet-udp unet-emul udp; do
	PLAN+=("pingpong $t adaptive 64 1")
done
PLAN+=("pingpong udp-napi block 64 1" "pingpong udp-napi adaptive 64 1")
# TCP over U-Net (bench/t_tcp.c, docs/tcp.md) against kernel TCP: both
# ends of each pair the same, 64-byte round trips and one connection's bulk.
for mode in spin block; do
	PLAN+=("pingpong tcp $mode 64 1" "pingpong unet-tcp $mode 64 1")
done
PLAN+=("rate tcp spin 1472 1" "rate unet-tcp spin 1472 1")
# The same bulk with the link at MTU 9000 (both ends, for these two only:
# segments of 8960 bytes, U-Net's in pieces), the same 1472-byte writes.
# Not in --quick (make check's form check): a figure, not a form.
((QUICK)) || PLAN+=("rate-jumbo tcp spin 1472 1" "rate-jumbo unet-tcp spin 1472 1")
# Raw U-Net streaming of the largest message at MTU 9000 (8992 bytes, one
# frame in pieces) in the same run: the target for big frames is raw
# U-Net >= 1.0x kernel TCP's bulk (with its offloads) at that MTU.
((QUICK)) || PLAN+=("rate-jumbo unet spin 8992 1")
# The kernel's best bulk at that MTU, for honesty beside the 1472-byte
# writes above: iperf3 (Debian's) with its own 128 KiB writes, which
# TCP's segmentation offload turns into 64 KiB packets crossing the veth
# once each; AF_XDP has no such offload, so every 8992-byte frame of raw
# U-Net crosses it on its own (docs/performance.md, "Jumbo MTUs").
((QUICK)) || PLAN+=("iperf3-jumbo tcp spin 131072 1")
# Transmit checksums: the rows above ask the device where the kernel lets
# them (AF_XDP TX metadata, docs/platform.md); the -sw rows compute them
# in software, same run (--quick, a form check: one row).
PLAN+=("rate unet-udp-sw spin 1472 1")
((QUICK)) || PLAN+=("rate unet-udp-sw spin 64 1" "rate unet-tcp-sw spin 1472 1")
# LogP overheads at every size (g comes from the rate rows); --quick:
# 64 bytes only.
LOGP_SIZES=("${SIZES[@]}")
((QUICK)) && LOGP_SIZES=(64)
for size in "${LOGP_SIZES[@]}"; do
	for t in unet uam unet-udp udp; do
		PLAN+=("logp $t spin $size 1")
	done
done

# Over IPv6 on the link (kinds pingpong-v6, rate-v6) and across a router
# (pingpong-routed, rate-routed: the server in namespace c, behind b),
# each against kernel UDP the same way, last in the run and in that
# order (IPv6 and the router are set up when their first row comes; the
# router takes U-Net off b's end, router_up).  Not in --quick: make
# check's form check has 3 s for new rows, and even the four 64-byte
# spinning round trips alone took 7.5 s there (a server and a client
# started per row; load average 13).
if ((!QUICK)); then
	for mode in spin block; do
		for t in udp unet-udp; do
			PLAN+=("pingpong-v6 $t $mode 64 1")
		done
	done
	for size in 64 1452; do
		for t in udp udp-mmsg unet-udp; do
			PLAN+=("rate-v6 $t spin $size 1")
		done
	done
	for mode in spin block; do
		for t in udp unet-routable unet-udp; do
			PLAN+=("pingpong-routed $t $mode 64 1")
		done
	done
	for size in 64 1464; do
		for t in udp udp-mmsg unet-routable unet-udp; do
			PLAN+=("rate-routed $t spin $size 1")
		done
	done
fi

# BENCH_ONLY=REGEX: only the plan's lines ("kind transport mode size
# channels") that match it, e.g. the waiting and LogP figures with the
# rate rows LogP's g comes from:
# BENCH_ONLY='^(pingpong [a-z-]+ [a-z]+ 64 |logp |rate (unet|uam|udp|unet-udp) )'
if [[ -n ${BENCH_ONLY:-} ]]; then
	ALL_PLAN=("${PLAN[@]}")
	PLAN=()
	for entry in "${ALL_PLAN[@]}"; do
		[[ $entry =~ $BENCH_ONLY ]] && PLAN+=("$entry")
	done
	((${#PLAN[@]})) || die "BENCH_ONLY='$BENCH_ONLY' matches nothing in the plan"
fi

# ---- setup ------------------------------------------------------------------

cd "$ROOT" || exit 1
# shellcheck source=scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=scripts/bench-common.sh
source "$ROOT/scripts/bench-common.sh"
# shellcheck source=scripts/stage.sh
source "$ROOT/scripts/stage.sh"

LOGS=$(mktemp -d /tmp/unet-bench.XXXXXX) || die "mktemp failed"
# unetd's socket and policy: a root-owned 0755 directory, so that nobody
# can reach the socket and the daemon accepts the policy.
EMUL_DIR=$(mktemp -d /tmp/unet-bench-d.XXXXXX) || die "mktemp failed"
chmod 755 "$EMUL_DIR"
EMUL_PID=""
# Pids of the current measurement's processes (killed on exit too).
CUR_PIDS=()
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p
	# TERM first: timeout(1) passes it on to the process it runs.
	for p in "${CUR_PIDS[@]}"; do
		stop_pid "$p"
	done
	emul_stop
	unet_netns_cleanup
	rm -rf "$EMUL_DIR"
	unet_stage_remove
	bench_logs_done bench "$LOGS"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The programs run from a copy that user nobody can reach (the emulated
# and granted rows run unet-bench as nobody), wherever the clone is.
unet_stage "$BUILD" || die "cannot copy the programs where user nobody can run them"
BENCH="$UNET_STAGE/unet-bench"
UNETCTL="$UNET_STAGE/unetctl"
UNETD="$UNET_STAGE/unetd"

echo "bench: setting up namespaces and veth" >&2
unet_netns_setup "ubench$$" || die "namespace setup failed"
echo "bench: $NS_A/$IF_A ($MAC_A) <-> $NS_B/$IF_B ($MAC_B)" >&2

# attach MODE: the XDP program on both ends in MODE.
attach() {
	in_a "$UNETCTL" attach "$IF_A" --mode "$1" >"$LOGS/attach" 2>&1 &&
		in_b "$UNETCTL" attach "$IF_B" --mode "$1" >>"$LOGS/attach" 2>&1
}
XDP_MODE=$WANT_XDP_MODE
if ! attach "$XDP_MODE"; then
	[[ $XDP_MODE == native ]] || { cat "$LOGS/attach" >&2; die "XDP attach in skb mode failed"; }
	echo "bench: native XDP attach failed ($(tail -n 1 "$LOGS/attach")); FALLING BACK TO SKB MODE" >&2
	in_a "$UNETCTL" detach "$IF_A" >/dev/null 2>&1
	in_b "$UNETCTL" detach "$IF_B" >/dev/null 2>&1
	XDP_MODE=skb
	attach skb || { cat "$LOGS/attach" >&2; die "XDP attach in skb mode failed too"; }
fi
echo "bench: XDP program attached on both ends in $XDP_MODE mode (veth: copy mode)" >&2

# ---- across a router, and IPv6 on the link ----------------------------------
#
# Made when the first row that needs them comes (they are the run's last),
# so that nothing before them sees a third namespace or IPv6 traffic.
VARIANT=""		# of the current row: "" (a--b), routed (a--b--c), v6 (a--b over IPv6)
IP6_A=fd00:201::1 IP6_B=fd00:201::2
ROUTER_STATE=""		# "", up, or why it could not be made
V6_STATE=""

# router_up: b routes between a and c (scripts/netns.sh, the tests'
# routed fixture), the XDP program on c's end and off b's: the program
# takes every UDP datagram to the channel port, whatever its destination
# address, so on a router's interface it would drop the routable
# channels' frames it should forward (drop_unknown_tag; a router runs no
# U-Net here).  Returns 1 (the reason in ROUTER_STATE) if that cannot be
# done; tried once.
router_up() {
	[[ -z $ROUTER_STATE ]] || { [[ $ROUTER_STATE == up ]]; return; }
	if ! in_b "$UNETCTL" detach "$IF_B" >"$LOGS/router" 2>&1; then
		ROUTER_STATE="cannot take U-Net off the router's $IF_B: $(last_err "$LOGS/router")"
	elif ! unet_netns_router >>"$LOGS/router" 2>&1; then
		ROUTER_STATE="cannot set up the router: $(last_err "$LOGS/router")"
	elif ! in_c "$UNETCTL" attach "$IF_C" --mode "$XDP_MODE" >>"$LOGS/router" 2>&1; then
		ROUTER_STATE="XDP attach on $IF_C failed: $(last_err "$LOGS/router")"
	else
		ROUTER_STATE=up
		return 0
	fi
	return 1
}

# v6_up: IPv6 on the link, no duplicate address detection (the addresses
# are usable at once), fd00:201::1 on a and ::2 on b.  As router_up.
v6_up() {
	[[ -z $V6_STATE ]] || { [[ $V6_STATE == up ]]; return; }
	if in_a sysctl -qw "net.ipv6.conf.$IF_A.accept_dad=0" "net.ipv6.conf.$IF_A.disable_ipv6=0" &&
		in_b sysctl -qw "net.ipv6.conf.$IF_B.accept_dad=0" "net.ipv6.conf.$IF_B.disable_ipv6=0" &&
		ip -n "$NS_A" addr add "$IP6_A/64" dev "$IF_A" nodad &&
		ip -n "$NS_B" addr add "$IP6_B/64" dev "$IF_B" nodad; then
		V6_STATE=up
		return 0
	fi
	V6_STATE="cannot turn IPv6 on for the link"
	return 1
}

# ---- running one measurement ---------------------------------------------

RESULTS="$LOGS/results.jsonl"
: >"$RESULTS"
NFAIL=0

# last_err FILE: the last non-empty line of a log, for a failure reason.
last_err() {
	[[ -s $1 ]] || { echo "(no output)"; return; }
	grep -v '^[[:space:]]*$' "$1" | tail -n 1 | cut -c1-160
}

# tp_args TRANSPORT SIDE CHANNELS: the transport options of one side.
tp_args() {
	local t=$1 side=$2 ch=$3
	local ifn mac_peer tag ptag laddr raddr
	if [[ $side == a ]]; then
		ifn=$IF_A mac_peer=$MAC_B tag=$TAG_A ptag=$TAG_B
		laddr="$IP_A:$PORT_A" raddr="$IP_B:$PORT_B"
		[[ $VARIANT == routed ]] && raddr="$IP_C:$PORT_B"
	elif [[ $side == b ]]; then
		ifn=$IF_B mac_peer=$MAC_A tag=$TAG_B ptag=$TAG_A
		laddr="$IP_B:$PORT_B" raddr="$IP_A:$PORT_A"
	else # c, behind the router b (no raw frames cross it: no peer MAC)
		ifn=$IF_C mac_peer=none tag=$TAG_B ptag=$TAG_A
		laddr="$IP_C:$PORT_B" raddr="$IP_A:$PORT_A"
	fi
	if [[ $VARIANT == v6 ]]; then
		if [[ $side == a ]]; then
			laddr="[$IP6_A]:$PORT_A" raddr="[$IP6_B]:$PORT_B"
		else
			laddr="[$IP6_B]:$PORT_B" raddr="[$IP6_A]:$PORT_A"
		fi
	fi
	case $t in
	unet-emul* | unet-grant) echo "--iface $ifn --tag $tag --peer $mac_peer --peer-tag $ptag --channels $ch" ;;
	unet | uam) echo "--iface $ifn --tag $tag --peer $mac_peer --peer-tag $ptag --channels $ch --xdp-mode $XDP_MODE" ;;
	unet-routable) echo "--iface $ifn --tag $tag --peer-ip ${raddr%:*} --peer-tag $ptag --channels $ch --xdp-mode $XDP_MODE" ;;
	udp | udp-mmsg | udp-napi) echo "--local $laddr --remote $raddr" ;;
	unet-udp | unet-tcp) echo "--iface $ifn --local $laddr --remote $raddr --xdp-mode $XDP_MODE" ;;
	unet-udp-sw | unet-tcp-sw)
		echo "--iface $ifn --local $laddr --remote $raddr --xdp-mode $XDP_MODE --no-tx-csum-offload"
		;;
	tcp) echo "--local $laddr --remote $raddr" ;;
	packet) echo "--iface $ifn --peer $mac_peer" ;;
	esac
}

# wait_server LOG PID SECONDS: until the server's output says it is ready
# (unet-bench: "... ready"; sockperf: "listen on").  Returns 1 if it
# died or said nothing within SECONDS.
wait_server() {
	local log=$1 pid=$2 t=$3 i
	for ((i = 0; i < t * 20; i++)); do
		grep -qE ' ready$|listen on|Server listening on' "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# stop_pid PID: TERM, then KILL after 2 s; reaps it.
stop_pid() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# json_line FILE: the last line of FILE that is a JSON object, compacted.
json_line() {
	local l
	l=$(grep '^[[:space:]]*{' "$1" 2>/dev/null | tail -n 1)
	[[ -n $l ]] || return 1
	jq -ce 'if type == "object" then . else error("not an object") end' <<<"$l" 2>/dev/null
}

# record_ok JSON GROUP KIND: add a measured record.
record_ok() {
	jq -c --arg g "$2" --arg k "$3" --arg x "$XDP_MODE" \
		'. + {group: $g, kind: $k, status: "ok", xdp_mode: $x}' <<<"$1" >>"$RESULTS"
}

# record_fail KIND TRANSPORT MODE SIZE CHANNELS GROUP REASON
record_fail() {
	local test
	case $1 in
	pingpong | pingpong-* | demux-pingpong | sockperf | vs | vs-routable) test=pingpong ;;
	logp) test=logp ;;
	*) test=rate ;;
	esac
	jq -nc --arg test "$test" --arg k "$1" --arg t "$2" --arg m "$3" --argjson s "$4" \
		--argjson c "$5" --arg g "$6" --arg r "$7" --arg x "$XDP_MODE" \
		'{test: $test, kind: $k, transport: $t, mode: $m, size: $s, channels: $c, group: $g,
		  status: "failed", reason: $r, xdp_mode: $x}' >>"$RESULTS"
	NFAIL=$((NFAIL + 1))
	LAST_REASON=$7
}

# ---- emulated endpoints ------------------------------------------------------
#
# unetd in namespace b, for one measurement at a time: it keeps its real
# endpoint on IF_B (queue 0) while it runs, which a direct endpoint there
# would need.  The b-side unet-bench runs as nobody ($NOBODY), so the
# library asks the daemon for an emulated endpoint.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups env "UNET_DAEMON_SOCKET=$EMUL_DIR/unetd.sock")

# emul_start [SPIN_US]: start the daemon (with --spin-us SPIN_US if
# given), wait until it is ready.  With EMUL_GRANT=1 it grants nobody a
# direct endpoint on IF_B's queue 0 instead (--grant-queues 0x1).
# Returns 1 (reason in EMUL_WHY) if it is not.
emul_start() {
	local i grant=()
	emul_stop # one at a time: a daemon holds IF_B's queue while it runs
	if ((${EMUL_GRANT:-0})); then
		printf 'user 65534 kinds direct tags 1-65535 endpoints 4\n' >"$EMUL_DIR/policy"
		grant=(--grant-queues 0x1)
	else
		printf 'user 65534 kinds emulated tags 1-65535 endpoints 4\n' >"$EMUL_DIR/policy"
	fi
	chmod 644 "$EMUL_DIR/policy"
	rm -f "$EMUL_DIR/unetd.sock"
	unet_bg_b "$UNETD" --foreground --socket "$EMUL_DIR/unetd.sock" --policy "$EMUL_DIR/policy" \
		--pin-root "$UNET_PIN_ROOT" "${grant[@]}" ${1:+--spin-us "$1"} >"$LOGS/unetd.log" 2>&1
	EMUL_PID=$UNET_BG_PID
	for ((i = 0; i < 100; i++)); do
		grep -q 'unetd: info: ready' "$LOGS/unetd.log" && [[ -S $EMUL_DIR/unetd.sock ]] && return 0
		kill -0 "$EMUL_PID" 2>/dev/null || break
		sleep 0.05
	done
	EMUL_WHY="unetd did not start: $(last_err "$LOGS/unetd.log")"
	emul_stop
	return 1
}

emul_stop() {
	[[ -n $EMUL_PID ]] || return 0
	stop_pid "$EMUL_PID"
	EMUL_PID=""
}

# bench_tp LABEL: the unet-bench transport behind a plan's transport.
bench_tp() {
	case $1 in
	unet-emul* | unet-grant | unet-routable) echo unet ;;
	udp-napi) echo udp ;;
	*-sw) echo "${1%-sw}" ;;
	*) echo "$1" ;;
	esac
}

# relabel_json JSON LABEL: a unet-bench record relabelled for the plan
# (emulated and granted endpoints: emul_json; udp-napi: veth's NAPI on).
relabel_json() {
	case $2 in
	udp-napi) jq -c '. + {transport: "udp-napi", veth_napi: true}' <<<"$1" ;;
	*-sw | unet-routable) jq -c --arg t "$2" '. + {transport: $t}' <<<"$1" ;;
	*) emul_json "$1" "$2" ;;
	esac
}

# veth_napi on|off: veth's NAPI on both ends (GRO, and GRO for UDP
# forwarding, without which veth hands locally sent UDP to the peer
# without NAPI): what a busy-polling socket needs to find a NAPI
# context.  Only around the udp-napi measurements.
veth_napi() {
	in_a ethtool -K "$IF_A" gro "$1" rx-udp-gro-forwarding "$1" >/dev/null 2>&1 &&
		in_b ethtool -K "$IF_B" gro "$1" rx-udp-gro-forwarding "$1" >/dev/null 2>&1
}

# emul_json JSON LABEL: a unet-bench record relabelled for the plan.
emul_json() {
	jq -c --arg t "$2" '. + {transport: $t,
		endpoint: (if $t == "unet-grant" then "granted" else "emulated" end),
		unetd_spin_us: (if $t == "unet-emul-nospin" then 0 else "default" end)}' <<<"$1"
}

# run_client LOG_PREFIX CMD...: in namespace a (or $CLIENT_NS, as
# CLIENT_PRE...), with the time limit; stdout to PREFIX.out, stderr to
# PREFIX.err.  Sets CLIENT_RC.
CLIENT_NS="" CLIENT_PRE=()
run_client() {
	local p=$1
	shift
	timeout -k 2 $((TO + 5)) ip netns exec "${CLIENT_NS:-$NS_A}" "${CLIENT_PRE[@]}" "$@" >"$p.out" 2>"$p.err" &
	CUR_PIDS+=("$!")
	wait "$!"
	CLIENT_RC=$?
}

# pingpong KIND TRANSPORT MODE SIZE CHANNELS: unet-bench echo on b,
# pingpong on a.  Leaves a summary in SUMMARY; returns 1 on failure.
m_pingpong() {
	local kind=$1 t=$2 mode=$3 size=$4 ch=$5 group=latency p spid j reason bt pre=() srv=b
	[[ $kind == demux-pingpong ]] && group=demux
	[[ $VARIANT == routed ]] && group=routed srv=c
	[[ $VARIANT == v6 ]] && group=ipv6
	p="$LOGS/$kind-$t-$mode-$size-$ch"
	bt=$(bench_tp "$t")
	if [[ $t == unet-emul* || $t == unet-grant ]]; then
		pre=("${NOBODY[@]}")
		EMUL_GRANT=$([[ $t == unet-grant ]] && echo 1 || echo 0) \
			emul_start "$([[ $t == unet-emul-nospin ]] && echo 0)" || { record_fail "$kind" "$t" "$mode" "$size" "$ch" "$group" "$EMUL_WHY"; return 1; }
	fi
	# shellcheck disable=SC2046 # tp_args is a list of words
	unet_bg_$srv "${pre[@]}" "$BENCH" echo --transport "$bt" $(tp_args "$t" $srv "$ch") --mode "$mode" \
		--cpu "$SRV_CPU" --timeout $((TO + 5)) >"$p.srv.out" 2>"$p.srv.err"
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if ! wait_server "$p.srv.err" "$spid" 10; then
		stop_pid "$spid"
		CUR_PIDS=()
		reason="echo server did not start: $(last_err "$p.srv.err")"
		record_fail "$kind" "$t" "$mode" "$size" "$ch" "$group" "$reason"
		return 1
	fi
	# Spinning with the daemon's default --spin-us makes three spinning
	# processes on two CPUs: round trips of a time slice (ms), so fewer.
	local count=$PP_COUNT warmup=$PP_WARMUP
	if [[ $t == unet-emul && $mode == spin ]]; then
		((count > EMUL_SPIN_COUNT)) && count=$EMUL_SPIN_COUNT
		((warmup > 50)) && warmup=50
	fi
	# the client direct unet (an emulated or granted endpoint is the
	# echo's), but routable when the echo's channel is
	local ct=$bt
	[[ $t == unet-routable ]] && ct=$t
	# shellcheck disable=SC2046
	run_client "$p" "$BENCH" pingpong --transport "$bt" $(tp_args "$ct" a "$ch") --size "$size" \
		--count "$count" --warmup "$warmup" --mode "$mode" --cpu "$CLI_CPU" --timeout "$TO"
	stop_pid "$spid"
	CUR_PIDS=()
	if ((CLIENT_RC == 124 || CLIENT_RC == 137)); then
		record_fail "$kind" "$t" "$mode" "$size" "$ch" "$group" "timed out after ${TO}s"
		return 1
	fi
	if ((CLIENT_RC != 0)); then
		record_fail "$kind" "$t" "$mode" "$size" "$ch" "$group" \
			"pingpong exit $CLIENT_RC: $(last_err "$p.err")"
		return 1
	fi
	if ! j=$(json_line "$p.out"); then
		record_fail "$kind" "$t" "$mode" "$size" "$ch" "$group" "pingpong printed no JSON result"
		return 1
	fi
	if ! jq -e '(.p50_us | type) == "number" and .p50_us > 0' <<<"$j" >/dev/null; then
		record_fail "$kind" "$t" "$mode" "$size" "$ch" "$group" "result without a positive p50_us: $j"
		return 1
	fi
	[[ $t == "$bt" ]] || j=$(relabel_json "$j" "$t")
	# The echo's own record (its CPU per message, its waits) as .server.
	local js
	js=$(json_line "$p.srv.out") || js=null
	j=$(jq -c --argjson s "$js" '. + {server: $s}' <<<"$j")
	record_ok "$j" "$group" "$kind"
	SUMMARY=$(jq -r '"p50 \(.p50_us) us, p99 \(.p99_us) us" + (if (.lost // 0) > 0 then ", lost \(.lost)" else "" end)' <<<"$j")
}

# rate_once KIND TRANSPORT SIZE CHANNELS REP: one sink/source pairing.
# Leaves the sink's record (with the source's attached as .source) in
# RATE_J and returns 0, or leaves the reason in RATE_WHY and returns 1.
rate_once() {
	local kind=$1 t=$2 size=$3 ch=$4 rep=$5 p spid j js n batch=$BATCH src src_rc bt
	local sink_side=b src_side=a sink_pre=()
	[[ $VARIANT == routed ]] && sink_side=c
	[[ $t == udp ]] && batch=1
	n=$(rate_count "$t" "$size")
	p="$LOGS/$kind-$t-$size-$ch-$rep"
	bt=$(bench_tp "$t")
	CLIENT_NS="" CLIENT_PRE=()
	case $t in
	unet-emul | unet-grant) sink_pre=("${NOBODY[@]}") ;;
	unet-emul-tx) sink_side=a src_side=b CLIENT_NS=$NS_B CLIENT_PRE=("${NOBODY[@]}") ;;
	esac
	if [[ $t == unet-emul* || $t == unet-grant ]] &&
		! EMUL_GRANT=$([[ $t == unet-grant ]] && echo 1 || echo 0) emul_start; then
		RATE_WHY=$EMUL_WHY
		return 1
	fi
	# No --count: the sink ends on the source's end marker (which carries
	# the number sent, so it can count losses), or after 500 ms idle.
	# shellcheck disable=SC2046
	unet_bg_$sink_side "${sink_pre[@]}" "$BENCH" sink --transport "$bt" $(tp_args "$t" $sink_side "$ch") \
		--size "$size" --batch "$BATCH" --mode spin --cpu "$SRV_CPU" --timeout $((TO + 5)) \
		--idle-ms 500 >"$p.srv.out" 2>"$p.srv.err"
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if ! wait_server "$p.srv.err" "$spid" 10; then
		stop_pid "$spid"
		CUR_PIDS=()
		RATE_WHY="sink did not start: $(last_err "$p.srv.err")"
		return 1
	fi
	# shellcheck disable=SC2046
	run_client "$p" "$BENCH" source --transport "$bt" $(tp_args "$t" $src_side "$ch") --size "$size" \
		--count "$n" --batch "$batch" --cpu "$CLI_CPU" --timeout "$TO"
	src=$CLIENT_RC
	CLIENT_NS="" CLIENT_PRE=()
	# The sink ends on its own: end marker, or idle for --idle-ms.
	unet_bg_wait "$spid" 10
	src_rc=$?
	CUR_PIDS=()
	if ((src == 124 || src == 137)); then
		RATE_WHY="source timed out after ${TO}s"
	elif ((src != 0)); then
		RATE_WHY="source exit $src: $(last_err "$p.err")"
	elif ((src_rc == 124)); then
		RATE_WHY="sink did not end within 10 s of the source"
	elif ((src_rc != 0)); then
		RATE_WHY="sink exit $src_rc: $(last_err "$p.srv.err")"
	elif ! j=$(json_line "$p.srv.out"); then
		RATE_WHY="sink printed no JSON result"
	elif ! jq -e '(.msgs_per_s | type) == "number" and .msgs_per_s > 0' <<<"$j" >/dev/null; then
		RATE_WHY="result without a positive msgs_per_s: $j"
	else
		js=$(json_line "$p.out") || js=null
		RATE_J=$(jq -c --argjson s "$js" --argjson b "$batch" \
			'. + {source: $s, recv_batch: .batch, batch: $b}' <<<"$j")
		[[ $t == "$bt" ]] || RATE_J=$(relabel_json "$RATE_J" "$t")
		return 0
	fi
	return 1
}

# m_rate KIND TRANSPORT MODE SIZE CHANNELS: RATE_REPS pairings; the
# record is the one with the median msgs/s, with every pairing's msgs/s
# in .reps_msgs_per_s.  One failed pairing fails the point.
m_rate() {
	local kind=$1 t=$2 size=$4 ch=$5 group=rate rep all=()
	[[ $kind == demux-rate ]] && group=demux
	[[ $VARIANT == routed ]] && group=routed
	[[ $VARIANT == v6 ]] && group=ipv6
	for ((rep = 1; rep <= RATE_REPS; rep++)); do
		if ! rate_once "$kind" "$t" "$size" "$ch" "$rep"; then
			((RATE_REPS > 1)) && RATE_WHY="pairing $rep of $RATE_REPS: $RATE_WHY"
			record_fail "$kind" "$t" spin "$size" "$ch" "$group" "$RATE_WHY"
			return 1
		fi
		all+=("$RATE_J")
	done
	RATE_J=$(printf '%s\n' "${all[@]}" | jq -sc '
		(map(.msgs_per_s)) as $r | sort_by(.msgs_per_s) | .[(length - 1) / 2 | floor] |
		. + {reps_msgs_per_s: $r}')
	record_ok "$RATE_J" "$group" "$kind"
	SUMMARY=$(jq -r '"\(.msgs_per_s | floor) msgs/s, \(.gbit_s) Gbit/s" +
		(if (.lost // 0) > 0 then ", lost \(.lost)" else "" end) +
		(if (.reps_msgs_per_s | length) > 1 then " (median of \(.reps_msgs_per_s | map(floor) | join(" ")))" else "" end)' <<<"$RATE_J")
}

# link_mtu MTU: both ends of the link (the XDP program, loaded
# frags-aware, stays attached; endpoints read the MTU when made).
link_mtu() {
	in_a ip link set "$IF_A" mtu "$1" && in_b ip link set "$IF_B" mtu "$1"
}

# m_iperf3 KIND SIZE: kernel TCP bulk, one connection, from a to b, for
# 2 s with iperf3's writes of SIZE bytes (the server on SRV_CPU, the
# client on CLI_CPU, as unet-bench's rows); the received rate.
m_iperf3() {
	local kind=$1 size=$2 p="$LOGS/$1" spid j
	unet_bg_b taskset -c "$SRV_CPU" iperf3 -s -1 --forceflush -B "$IP_B" -p "$IPERF_PORT" >"$p.srv.out" 2>&1
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if ! wait_server "$p.srv.out" "$spid" 5; then
		stop_pid "$spid"
		CUR_PIDS=()
		record_fail "$kind" tcp spin "$size" 1 rate "iperf3 server did not start: $(last_err "$p.srv.out")"
		return 1
	fi
	run_client "$p" taskset -c "$CLI_CPU" iperf3 -c "$IP_B" -p "$IPERF_PORT" -t 2 -l "$size" -J
	stop_pid "$spid"
	CUR_PIDS=()
	j=$(jq -c --argjson size "$size" '.end.sum_received.bits_per_second as $b | select($b > 0) |
		{test: "rate", transport: "tcp", mode: "spin", size: $size, channels: 1,
		 gbit_s: ($b / 1e9 * 1000 | round / 1000), msgs_per_s: ($b / 8 / $size | round), writer: "iperf3"}' \
		"$p.out" 2>/dev/null)
	if ((CLIENT_RC != 0)) || [[ -z $j ]]; then
		record_fail "$kind" tcp spin "$size" 1 rate "iperf3 exit $CLIENT_RC: $(last_err "$p.err")"
		return 1
	fi
	record_ok "$j" rate "$kind"
	SUMMARY="$(jq -r '.gbit_s' <<<"$j") Gbit/s"
}

# m_bulk: UAM bulk stores (BULK_BYTES each, 2 in flight) from a into b's
# registered memory; the echo on b only serves them.  Bandwidth counts
# data the peer confirmed it has (the store's completion).
# m_bulk [LOSS_PCT [get]]: with LOSS_PCT, the same at that injected loss on
# both interfaces (kind bulk-LOSS_PCT); with get, gets of as much from b's
# memory into a's instead (kind bulk-get, bulk-get-LOSS_PCT).
m_bulk() {
	local t=uam p spid j kind=bulk loss=${1:-0} get=()
	[[ ${2:-} == get ]] && kind=bulk-get get=(--bulk-get)
	((loss)) && kind=$kind-$loss
	p="$LOGS/$kind"
	if ((loss)) && { ! in_a "$UNETCTL" fault "$IF_A" --drop-ppm $((loss * 10000)) >/dev/null 2>&1 ||
		! in_b "$UNETCTL" fault "$IF_B" --drop-ppm $((loss * 10000)) >/dev/null 2>&1; }; then
		record_fail "$kind" $t spin "$BULK_BYTES" 1 bulk "unetctl fault failed"
		return 1
	fi
	# shellcheck disable=SC2046
	unet_bg_b "$BENCH" echo --transport $t $(tp_args $t b 1) --bulk-bytes "$BULK_BYTES" \
		--mode spin --cpu "$SRV_CPU" --timeout $((TO + 5)) >"$p.srv.out" 2>"$p.srv.err"
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if ! wait_server "$p.srv.err" "$spid" 10; then
		stop_pid "$spid"
		CUR_PIDS=()
		in_a "$UNETCTL" fault "$IF_A" --drop-ppm 0 >/dev/null 2>&1
		in_b "$UNETCTL" fault "$IF_B" --drop-ppm 0 >/dev/null 2>&1
		record_fail "$kind" $t spin "$BULK_BYTES" 1 bulk "echo did not start: $(last_err "$p.srv.err")"
		return 1
	fi
	# shellcheck disable=SC2046
	run_client "$p" "$BENCH" bulk --transport $t $(tp_args $t a 1) --bulk-bytes "$BULK_BYTES" \
		--count "$BULK_COUNT" --batch 2 "${get[@]}" --cpu "$CLI_CPU" --timeout "$TO"
	stop_pid "$spid"
	CUR_PIDS=()
	if ((loss)); then
		in_a "$UNETCTL" fault "$IF_A" --drop-ppm 0 >/dev/null 2>&1
		in_b "$UNETCTL" fault "$IF_B" --drop-ppm 0 >/dev/null 2>&1
	fi
	if ((CLIENT_RC != 0)); then
		record_fail "$kind" $t spin "$BULK_BYTES" 1 bulk "bulk exit $CLIENT_RC: $(last_err "$p.err")"
		return 1
	fi
	if ! j=$(json_line "$p.out") || ! jq -e '.gbit_s > 0' <<<"$j" >/dev/null; then
		record_fail "$kind" $t spin "$BULK_BYTES" 1 bulk "bulk printed no positive gbit_s"
		return 1
	fi
	record_ok "$j" bulk "$kind"
	SUMMARY=$(jq -r '"\(.gbit_s) Gbit/s, \(.transfers) \(.op)s of \(.bulk_bytes) bytes"' <<<"$j")
}

# m_logp TRANSPORT SIZE: unet-bench logp on a against a spinning echo on
# b: o_s, o_r, the round trip and L (g is added from the rate rows when
# results.json is written).
m_logp() {
	local t=$1 size=$2 p spid j
	p="$LOGS/logp-$t-$size"
	# shellcheck disable=SC2046
	unet_bg_b "$BENCH" echo --transport "$t" $(tp_args "$t" b 1) --mode spin --cpu "$SRV_CPU" \
		--timeout $((TO + 5)) >"$p.srv.out" 2>"$p.srv.err"
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if ! wait_server "$p.srv.err" "$spid" 10; then
		stop_pid "$spid"
		CUR_PIDS=()
		record_fail logp "$t" spin "$size" 1 logp "echo server did not start: $(last_err "$p.srv.err")"
		return 1
	fi
	# shellcheck disable=SC2046
	run_client "$p" "$BENCH" logp --transport "$t" $(tp_args "$t" a 1) --size "$size" \
		--count "$LOGP_COUNT" --cpu "$CLI_CPU" --timeout "$TO"
	stop_pid "$spid"
	CUR_PIDS=()
	if ((CLIENT_RC != 0)); then
		record_fail logp "$t" spin "$size" 1 logp "logp exit $CLIENT_RC: $(last_err "$p.err")"
		return 1
	fi
	if ! j=$(json_line "$p.out") || ! jq -e '.rtt_us > 0 and .os_us > 0 and .or_us > 0' <<<"$j" >/dev/null; then
		record_fail logp "$t" spin "$size" 1 logp "logp printed no positive rtt_us, os_us, or_us"
		return 1
	fi
	record_ok "$j" logp logp
	SUMMARY=$(jq -r '"rtt \(.rtt_us) us, o_s \(.os_us) us, o_r \(.or_us) us, L \(.L_us) us"' <<<"$j")
}

# m_calls LOSS_PCT DEPTH: UAM calls (a 64-byte message and its echo),
# DEPTH in flight, with LOSS_PCT % of the U-Net frames delivered on each
# interface dropped by the XDP program (unetctl fault): loss recovery.
m_calls() {
	local loss=$1 depth=$2 t=uam p spid j ppm=$(($1 * 10000)) n=$CALLS_COUNT
	p="$LOGS/calls-$loss-$depth"
	((depth == 1)) && n=$((CALLS_COUNT / 4))
	if ! in_a "$UNETCTL" fault "$IF_A" --drop-ppm "$ppm" >/dev/null 2>&1 ||
		! in_b "$UNETCTL" fault "$IF_B" --drop-ppm "$ppm" >/dev/null 2>&1; then
		record_fail "calls-$loss" $t spin 64 "$depth" calls "unetctl fault failed"
		return 1
	fi
	# shellcheck disable=SC2046
	unet_bg_b "$BENCH" echo --transport $t $(tp_args $t b 1) --mode spin --cpu "$SRV_CPU" \
		--timeout $((TO + 5)) >"$p.srv.out" 2>"$p.srv.err"
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if wait_server "$p.srv.err" "$spid" 10; then
		# shellcheck disable=SC2046
		run_client "$p" "$BENCH" calls --transport $t $(tp_args $t a 1) --size 64 --count "$n" \
			--batch "$depth" --mode spin --cpu "$CLI_CPU" --timeout "$TO"
	else
		CLIENT_RC=255
		echo "echo did not start: $(last_err "$p.srv.err")" >"$p.err"
	fi
	stop_pid "$spid"
	CUR_PIDS=()
	in_a "$UNETCTL" fault "$IF_A" --drop-ppm 0 >/dev/null 2>&1
	in_b "$UNETCTL" fault "$IF_B" --drop-ppm 0 >/dev/null 2>&1
	if ((CLIENT_RC != 0)) || ! j=$(json_line "$p.out"); then
		record_fail "calls-$loss" $t spin 64 "$depth" calls "calls exit $CLIENT_RC: $(last_err "$p.err")"
		return 1
	fi
	j=$(jq -c --argjson ppm "$ppm" --argjson d "$depth" \
		'. + {loss_ppm: $ppm, channels: $d, msgs_per_s: .calls_per_s}' <<<"$j")
	record_ok "$j" calls "calls-$loss"
	SUMMARY=$(jq -r '"\(.calls_per_s | floor) calls/s"' <<<"$j")
}

# m_vs SIZE: UAM's spinning round trip against raw U-Net's, interleaved
# in one process pair (unet-bench pingpong --vs: blocks of 1000 round
# trips of each in turn, against one echo serving both), VS_REPS runs of
# VS_COUNT round trips each, by scripts/bench-rtt-ab.sh on a veth of its
# own (three queues: --vs puts raw U-Net on queues 1-2; this run's veth
# has one).  The pingpong rows above run UAM and raw U-Net a second
# apart, on a host whose speed moves by up to 2x between two such runs
# here; interleaved, both see the same host.  Record: the median of the
# per-run ratios of the p50s (p50_ratio) and their range, and the median
# p50s (p50_us UAM, vs_p50_us raw U-Net).
m_vs() {
	local size=$1
	local p="$LOGS/vs-$size" j
	RTT_COUNT=$VS_COUNT bash "$ROOT/scripts/bench-rtt-ab.sh" --xdp-mode "$XDP_MODE" \
		--reps "$VS_REPS" --size "$size" --json "$BUILD" >"$p.out" 2>"$p.err"
	if ! j=$(jq -ce --argjson s "$size" --argjson c "$VS_COUNT" 'select(.size == $s) |
		{test: "pingpong", transport: "uam", vs: "unet", mode: "spin", size, channels: 1,
		 p50_ratio, p50_ratio_min, p50_ratio_max, p50_us, vs_p50_us, runs, count: $c}' \
		"$p.out" 2>/dev/null) || [[ -z $j ]]; then
		record_fail vs uam spin "$size" 1 vs "bench-rtt-ab.sh gave no ratio: $(last_err "$p.err")"
		return 1
	fi
	record_ok "$j" vs vs
	SUMMARY=$(jq -r '"UAM/raw p50 \(.p50_ratio)x [\(.p50_ratio_min)-\(.p50_ratio_max)] over \(.runs) runs"' <<<"$j")
}

# m_vs_routable SIZE: a routable channel's spinning round trip against a
# raw channel's, interleaved the same way (bench-rtt-ab.sh --routable).
m_vs_routable() {
	local size=$1
	local p="$LOGS/vs-routable-$size" j
	RTT_COUNT=$VS_COUNT bash "$ROOT/scripts/bench-rtt-ab.sh" --routable --xdp-mode "$XDP_MODE" \
		--reps "$VS_REPS" --size "$size" --json "$BUILD" >"$p.out" 2>"$p.err"
	if ! j=$(jq -ce --argjson s "$size" --argjson c "$VS_COUNT" 'select(.size == $s) |
		{test: "pingpong", transport: "unet-routable", vs: "unet", mode: "spin", size, channels: 1,
		 p50_ratio, p50_ratio_min, p50_ratio_max, p50_us, vs_p50_us, runs, count: $c,
		 aa_ratio, p50_ratio_net}' \
		"$p.out" 2>/dev/null) || [[ -z $j ]]; then
		record_fail vs-routable unet-routable spin "$size" 1 vs "bench-rtt-ab.sh --routable gave no ratio: $(last_err "$p.err")"
		return 1
	fi
	record_ok "$j" vs vs-routable
	SUMMARY=$(jq -r '"routable/raw p50 \(.p50_ratio)x [\(.p50_ratio_min)-\(.p50_ratio_max)] over \(.runs) runs; raw/raw \(.aa_ratio)x, net \(.p50_ratio_net)x"' <<<"$j")
}

# m_rate_ab SIZE: a routable channel's message rate against a raw
# channel's, pairing by pairing in turn (raw, routable, raw, ...;
# RATE_REPS of each), so both see the same state of the host; the record:
# the median of the pairings' ratios, their range, and the median rates.
m_rate_ab() {
	local size=$1 rep raw routable ratios=()
	for ((rep = 1; rep <= RATE_REPS; rep++)); do
		rate_once rate-ab unet "$size" 1 "raw$rep" || break
		raw=$(jq -r .msgs_per_s <<<"$RATE_J")
		rate_once rate-ab unet-routable "$size" 1 "rt$rep" || break
		routable=$(jq -r .msgs_per_s <<<"$RATE_J")
		ratios+=("$raw $routable")
	done
	if ((${#ratios[@]} < RATE_REPS)); then
		record_fail rate-ab unet-routable spin "$size" 1 rate "pairing $((${#ratios[@]} + 1)): $RATE_WHY"
		return 1
	fi
	RATE_J=$(printf '%s\n' "${ratios[@]}" | jq -Rsc --argjson s "$size" '
		[split("\n")[] | select(length > 0) | split(" ") | map(tonumber)] as $p |
		($p | map(.[1] / .[0]) | sort) as $r |
		{test: "rate", transport: "unet-routable", vs: "unet", size: $s, channels: 1,
		 runs: ($p | length), msgs_per_s_ratio: ($r[(($r | length) - 1) / 2 | floor] * 1000 | round / 1000),
		 msgs_per_s_ratio_min: ($r[0] * 1000 | round / 1000), msgs_per_s_ratio_max: ($r[-1] * 1000 | round / 1000),
		 msgs_per_s: ($p | map(.[1]) | sort | .[(length - 1) / 2 | floor]),
		 vs_msgs_per_s: ($p | map(.[0]) | sort | .[(length - 1) / 2 | floor])}')
	record_ok "$RATE_J" rate rate-ab
	SUMMARY=$(jq -r '"routable/raw msgs/s \(.msgs_per_s_ratio)x [\(.msgs_per_s_ratio_min)-\(.msgs_per_s_ratio_max)] over \(.runs) pairings"' <<<"$RATE_J")
}

# m_sockperf MODE SIZE: sockperf ping-pong (kernel UDP), full round
# trips.  Spinning: non-blocking sockets on both sides, polled with
# recvfrom; blocking: sockperf's default blocking recvfrom.  A server per
# point, stopped after it: a spinning one left running would take CPU 1
# from every later measurement.
m_sockperf() {
	local mode=$1 size=$2 p extra=() j spid
	p="$LOGS/sockperf-$mode-$size"
	[[ $mode == spin ]] && extra=(--nonblocked)
	unet_bg_b taskset -c "$SRV_CPU" sockperf server -i "$IP_B" -p "$SP_PORT" "${extra[@]}" \
		>"$p.srv.out" 2>&1
	spid=$UNET_BG_PID
	CUR_PIDS=("$spid")
	if ! wait_server "$p.srv.out" "$spid" 5; then
		stop_pid "$spid"
		CUR_PIDS=()
		record_fail sockperf udp "$mode" "$size" 1 reference \
			"sockperf server did not start: $(last_err "$p.srv.out")"
		return 1
	fi
	run_client "$p" taskset -c "$CLI_CPU" sockperf ping-pong -i "$IP_B" -p "$SP_PORT" \
		-m "$size" -t "$SP_SECS" --full-rtt "${extra[@]}"
	stop_pid "$spid"
	CUR_PIDS=()
	if ((CLIENT_RC != 0)); then
		local ef="$p.err"
		[[ -s $ef ]] || ef="$p.out"
		record_fail sockperf udp "$mode" "$size" 1 reference \
			"sockperf exit $CLIENT_RC: $(last_err "$ef")"
		return 1
	fi
	# sockperf: ---> percentile 50.000 =    5.690   (us; --full-rtt: round trip)
	j=$(awk -v mode="$mode" -v size="$size" '
		function num(s) { sub(/.*= */, "", s); return s + 0 }
		/<MIN> observation/ { mn = num($0) }
		/<MAX> observation/ { mx = num($0) }
		/percentile 50\.000/ { p50 = num($0) }
		/percentile 90\.000/ { p90 = num($0) }
		/percentile 99\.000/ { p99 = num($0) }
		/percentile 99\.900/ { p999 = num($0) }
		/\[Valid Duration\]/ {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^ReceivedMessages=/) { split($i, a, "="); cnt = a[2] + 0 }
		}
		/dropped messages = / { s = $0; sub(/.*dropped messages = /, "", s); lost = s + 0 }
		END {
			if (p50 == "" || p50 <= 0) exit 1
			printf "{\"test\":\"pingpong\",\"transport\":\"sockperf\",\"mode\":\"%s\",\"size\":%d,", mode, size
			printf "\"channels\":1,\"count\":%d,\"lost\":%d,\"min_us\":%s,\"p50_us\":%s,", cnt, lost, mn, p50
			printf "\"p90_us\":%s,\"p99_us\":%s,\"p999_us\":%s,\"max_us\":%s,\"cpu_us_per_msg\":null}\n", p90, p99, p999, mx
		}' "$p.out") || {
		record_fail sockperf udp "$mode" "$size" 1 reference "no percentiles in sockperf output"
		return 1
	}
	record_ok "$j" reference sockperf
	SUMMARY=$(jq -r '"p50 \(.p50_us) us, p99 \(.p99_us) us"' <<<"$j")
}

# ---- the run ------------------------------------------------------------------

# Other work on these two CPUs disturbs every figure: say so, and keep
# the load averages with the results.
LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$LOAD_START" 'BEGIN { exit !(l >= 0.5) }'; then
	echo "bench: WARNING: load average is $LOAD_START before the run: other work on this machine will disturb the figures" >&2
fi
START=$SECONDS
NPLAN=${#PLAN[@]}
echo "bench: $NPLAN measurements$( ((QUICK)) && echo " (quick)")" >&2
i=0
for entry in "${PLAN[@]}"; do
	i=$((i + 1))
	read -r kind t mode size ch <<<"$entry"
	VARIANT=""
	case $kind in
	*-routed) VARIANT=routed ;;
	*-v6) VARIANT=v6 ;;
	esac
	case $kind in
	pingpong-routed) desc="pingpong $t $mode ${size}B across a router" ;;
	rate-routed) desc="rate $t ${size}B across a router" ;;
	pingpong-v6) desc="pingpong $t $mode ${size}B over IPv6" ;;
	rate-v6) desc="rate $t ${size}B over IPv6" ;;
	pingpong) desc="pingpong $t $mode ${size}B" ;;
	rate) [[ $t == unet-emul* ]] && desc="rate $t ${size}B (unetd $([[ $t == unet-emul ]] && echo receives || echo sends))" || desc="rate $t ${size}B" ;;
	sockperf) desc="pingpong sockperf $mode ${size}B" ;;
	demux-pingpong) desc="demux pingpong unet $mode ${size}B, $ch channels" ;;
	demux-rate) desc="demux rate unet ${size}B, $ch channels" ;;
	rate-jumbo) desc="rate $t ${size}B writes at MTU 9000" ;;
	iperf3-jumbo) desc="rate kernel TCP (iperf3) ${size}B writes at MTU 9000" ;;
	bulk) desc="bulk uam, $BULK_COUNT stores of $BULK_BYTES bytes" ;;
	bulk-get) desc="bulk uam, $BULK_COUNT gets of $BULK_BYTES bytes" ;;
	bulk-get-*) desc="bulk uam, $BULK_COUNT gets of $BULK_BYTES bytes, ${kind#bulk-get-}% loss" ;;
	bulk-*) desc="bulk uam, $BULK_COUNT stores of $BULK_BYTES bytes, ${kind#bulk-}% loss" ;;
	logp) desc="logp $t ${size}B" ;;
	calls-*) desc="calls uam, ${kind#calls-}% loss, $ch in flight" ;;
	vs) desc="pingpong uam --vs unet ${size}B, $VS_REPS interleaved runs" ;;
	vs-routable) desc="pingpong unet --peer-ip --vs unet ${size}B, $VS_REPS interleaved runs" ;;
	rate-ab) desc="rate unet and unet-routable ${size}B, pairings in turn" ;;
	esac
	printf '[%d/%d] %s ... ' "$i" "$NPLAN" "$desc" >&2
	SUMMARY="" LAST_REASON=""
	ok=0
	case $kind in
	pingpong | demux-pingpong)
		if [[ $t == udp-napi ]] && ! veth_napi on; then
			record_fail "$kind" "$t" "$mode" "$size" "$ch" latency "ethtool cannot turn on veth's NAPI (gro, rx-udp-gro-forwarding)"
		else
			m_pingpong "$kind" "$t" "$mode" "$size" "$ch" && ok=1
		fi
		[[ $t == udp-napi ]] && veth_napi off
		;;
	logp) m_logp "$t" "$size" && ok=1 ;;
	pingpong-routed | rate-routed | pingpong-v6 | rate-v6)
		if [[ $VARIANT == routed ]] && ! router_up; then
			record_fail "$kind" "$t" "$mode" "$size" "$ch" routed "$ROUTER_STATE"
		elif [[ $VARIANT == v6 ]] && ! v6_up; then
			record_fail "$kind" "$t" "$mode" "$size" "$ch" ipv6 "$V6_STATE"
		elif [[ $kind == pingpong-* ]]; then
			m_pingpong "$kind" "$t" "$mode" "$size" "$ch" && ok=1
		else
			m_rate "$kind" "$t" "$mode" "$size" "$ch" && ok=1
		fi
		;;
	sockperf) m_sockperf "$mode" "$size" && ok=1 ;;
	rate | demux-rate) m_rate "$kind" "$t" "$mode" "$size" "$ch" && ok=1 ;;
	rate-jumbo)
		if ! link_mtu 9000; then
			record_fail "$kind" "$t" "$mode" "$size" "$ch" rate "cannot set the link's MTU to 9000"
		else
			m_rate "$kind" "$t" "$mode" "$size" "$ch" && ok=1
		fi
		link_mtu 1500 || die "cannot set the link's MTU back to 1500"
		;;
	iperf3-jumbo)
		if ! link_mtu 9000; then
			record_fail "$kind" "$t" "$mode" "$size" "$ch" rate "cannot set the link's MTU to 9000"
		else
			m_iperf3 "$kind" "$size" && ok=1
		fi
		link_mtu 1500 || die "cannot set the link's MTU back to 1500"
		;;
	bulk) m_bulk && ok=1 ;;
	bulk-get) m_bulk 0 get && ok=1 ;;
	bulk-get-*) m_bulk "${kind#bulk-get-}" get && ok=1 ;;
	bulk-*) m_bulk "${kind#bulk-}" && ok=1 ;;
	calls-*) m_calls "${kind#calls-}" "$ch" && ok=1 ;;
	vs) m_vs "$size" && ok=1 ;;
	vs-routable) m_vs_routable "$size" && ok=1 ;;
	rate-ab) m_rate_ab "$size" && ok=1 ;;
	esac
	emul_stop
	CLIENT_NS="" CLIENT_PRE=()
	if ((ok)); then
		echo "$SUMMARY" >&2
	else
		echo "FAILED: $LAST_REASON" >&2
	fi
done
ELAPSED=$((SECONDS - START))

# LogP's g: the time per message at the sustained rate of the same
# transport and size in this run (1 / msgs_per_s), into the logp records.
jq -sc '(map(select(.kind == "rate" and .status == "ok") | {key: "\(.transport) \(.size)", value: .msgs_per_s})
	 | from_entries) as $r |
	.[] | if .kind == "logp" and .status == "ok" then
		($r["\(.transport) \(.size)"]) as $m |
		. + {g_us: (if $m then 1e6 / $m else null end), g_from: "rate msgs_per_s"}
	else . end' "$RESULTS" >"$RESULTS.tmp" && mv "$RESULTS.tmp" "$RESULTS"

# ---- results.json ------------------------------------------------------------

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
SP_VER=""
((HAVE_SOCKPERF)) && SP_VER=$(sockperf --version 2>/dev/null | sed -n 's/.*version \([^ ]*\).*/\1/p' | head -n 1)
jq -s --arg kernel "$(uname -r)" --argjson nproc "$NCPU" --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--arg xdp "$XDP_MODE" --arg cpu "$CPU_MODEL" --arg host "$(uname -n)" --argjson quick "$QUICK" \
	--argjson secs "$ELAPSED" --argjson ppn "$PP_COUNT" --argjson ppw "$PP_WARMUP" \
	--argjson batch "$BATCH" --argjson reps "$RATE_REPS" --arg spver "$SP_VER" --argjson spsecs "$SP_SECS" \
	--argjson failed "$NFAIL" --arg l0 "$LOAD_START" \
	'{machine: {kernel: $kernel, nproc: $nproc, cpu: $cpu, host: $host, date: $date,
		    xdp_mode: $xdp, link: "veth (copy mode)", server_cpu: 1, client_cpu: 0,
		    loadavg_before: ($l0 | tonumber)},
	  run: {quick: ($quick == 1), seconds: $secs, pingpong_count: $ppn, pingpong_warmup: $ppw,
		rate_batch: $batch, rate_reps: $reps, sockperf_version: $spver, sockperf_secs: $spsecs, failed: $failed},
	  results: .}' "$RESULTS" >"$OUT/results.json.tmp" || die "cannot write $OUT/results.json"
mv "$OUT/results.json.tmp" "$OUT/results.json" || die "cannot write $OUT/results.json"

# ---- the table ---------------------------------------------------------------
#
# jq flattens the records into tab-separated rows, awk finds the kernel UDP
# row of the same run for each and prints the ratios: pingpong rows
# against udp (unet-bench, send/recv) in the same mode and size; rate
# rows against udp send/recv and udp-mmsg at the same size; demux rows
# against the 1-channel row as well.

jq -r '.results[] | [.kind, .transport, .mode, .size, .channels, .status,
	.min_us, .p50_us, .p90_us, .p99_us, .p999_us, .max_us, .cpu_us_per_msg,
	.msgs_per_s, .gbit_s, .lost, .batch, .reason, .source.cpu_us_per_msg]
	| map(. // "-" | tostring) | @tsv' \
	"$OUT/results.json" >"$LOGS/rows.tsv"

{
	printf 'unet-xdp bench, %s: kernel %s, %d CPUs, veth copy mode, XDP %s mode%s\n' \
		"$(jq -r .machine.date "$OUT/results.json")" "$(uname -r)" "$NCPU" "$XDP_MODE" \
		"$( ((QUICK)) && echo ", QUICK (form check only)")"
	awk -F'\t' '
	function r(v, base) { return (v == "-" || base == "-" || base + 0 <= 0) ? "-" : sprintf("%.2fx", v / base) }
	function cell(v, base) { return (v == "-") ? "-" : sprintf("%.1f %s", v, r(v, base)) }
	function f1(v) { return (v == "-") ? "-" : sprintf("%.1f", v) }
	function f2(v) { return (v == "-") ? "-" : sprintf("%.2f", v) }
	{
		n++; kind[n] = $1; tp[n] = $2; md[n] = $3; sz[n] = $4; ch[n] = $5; st[n] = $6
		mn[n] = $7; p50[n] = $8; p90[n] = $9; p99[n] = $10; p999[n] = $11; mx[n] = $12
		cpu[n] = $13; mps[n] = $14; gb[n] = $15; lost[n] = $16; bt[n] = $17; why[n] = $18; tcpu[n] = $19
		if ($6 == "ok" && $1 == "pingpong" && $2 == "udp") {
			U[$3, $4, "min"] = $7; U[$3, $4, "p50"] = $8; U[$3, $4, "p90"] = $9
			U[$3, $4, "p99"] = $10; U[$3, $4, "p999"] = $11; U[$3, $4, "max"] = $12
			U[$3, $4, "cpu"] = $13
		}
		if ($6 == "ok" && $1 == "rate" && $2 == "udp") { UR[$4] = $14; URc[$4] = $13; URt[$4] = $19 }
		if ($6 == "ok" && $1 == "rate" && $2 == "udp-mmsg") { MR[$4] = $14 }
		if ($6 == "ok" && $1 == "demux-pingpong" && $5 == 1) D1p = $8
		if ($6 == "ok" && $1 == "demux-rate" && $5 == 1) D1r = $14
		if ($6 == "ok" && $1 == "pingpong" && $2 == "unet") { UN[$3, $4, "p50"] = $8; UN[$3, $4, "p99"] = $10 }
		if ($6 == "ok" && $1 == "pingpong" && $2 == "unet-emul") { EM[$3, $4, "p50"] = $8; EM[$3, $4, "p99"] = $10 }
		if ($6 == "ok" && $1 == "pingpong" && $2 == "unet-emul-nospin") EN[$3, $4, "p50"] = $8
		if ($6 == "ok" && $1 == "pingpong" && $2 == "unet-grant") GR[$3, $4, "p50"] = $8
		if ($6 == "ok" && $1 == "pingpong" && $2 == "unet-routable") RC[$3, $4, "p50"] = $8
		if ($6 == "ok" && $1 == "bulk") BULK = $15
		if ($6 == "ok" && $1 == "bulk-1") BULK1 = $15
		if ($6 == "ok" && $1 == "bulk-get") BULKG = $15
		if ($6 == "ok" && $1 == "bulk-get-1") BULKG1 = $15
		if ($6 == "ok" && $1 ~ /^calls-/) CL[substr($1, 7), $5] = $14
		if ($6 == "ok" && $1 == "rate") { RT[$2, $4] = $14; GB[$2, $4] = $15 }
		if ($6 == "ok" && $1 == "demux-pingpong" && $5 + 0 > DNc) { DNc = $5 + 0; DNp = $8 }
		if ($6 == "ok" && $1 == "demux-rate" && $5 + 0 > DRc) { DRc = $5 + 0; DNr = $14 }
	}
	function base(m, s, k) { return ((m, s, k) in U) ? U[m, s, k] : "-" }
	END {
		print ""
		print "Round trips, us (each figure with its ratio to kernel UDP, unet-bench udp, same mode and size):"
		printf "%-9s %-8s %5s  %-13s %-13s %-13s %-13s %-13s %-13s %s\n", "transport", "mode", "bytes",
			"min", "p50", "p90", "p99", "p99.9", "max", "cpu us/rt"
		for (i = 1; i <= n; i++) {
			if (kind[i] != "pingpong" && kind[i] != "sockperf") continue
			name = (kind[i] == "sockperf") ? "sockperf" : tp[i]
			if (st[i] != "ok") { printf "%-9s %-8s %5s  FAILED: %s\n", name, md[i], sz[i], why[i]; continue }
			m = md[i]; s = sz[i]
			printf "%-9s %-8s %5s  %-13s %-13s %-13s %-13s %-13s %-13s %s\n", name, m, s,
				cell(mn[i], base(m, s, "min")), cell(p50[i], base(m, s, "p50")),
				cell(p90[i], base(m, s, "p90")), cell(p99[i], base(m, s, "p99")),
				cell(p999[i], base(m, s, "p999")), cell(mx[i], base(m, s, "max")),
				(cpu[i] == "-") ? "-" : sprintf("%.2f %s", cpu[i], r(cpu[i], base(m, s, "cpu")))
		}
		print ""
		print "One-way rate, batched sends (ratios: msgs/s to udp send/recv and to udp-mmsg, same size):"
		printf "%-9s %5s %5s %12s %8s %9s %9s  %-14s %-14s %s\n", "transport", "bytes", "batch",
			"msgs/s", "Gbit/s", "x udp", "x mmsg", "tx cpu us/msg", "rx cpu us/msg", "lost"
		for (i = 1; i <= n; i++) {
			if (kind[i] != "rate") continue
			if (st[i] != "ok") { printf "%-9s %5s  FAILED: %s\n", tp[i], sz[i], why[i]; continue }
			s = sz[i]
			printf "%-9s %5s %5s %12.0f %8.2f %9s %9s  %-14s %-14s %s\n", tp[i], s, bt[i], mps[i], gb[i],
				r(mps[i], (s in UR) ? UR[s] : "-"), r(mps[i], (s in MR) ? MR[s] : "-"),
				(tcpu[i] == "-") ? "-" : sprintf("%.3f %s", tcpu[i], r(tcpu[i], (s in URt) ? URt[s] : "-")),
				(cpu[i] == "-") ? "-" : sprintf("%.3f %s", cpu[i], r(cpu[i], (s in URc) ? URc[s] : "-")),
				lost[i]
		}
		for (i = 1; i <= n; i++) {
			if (kind[i] !~ /^bulk(-get)?(-1)?$/) continue
			what = (kind[i] ~ /get/) ? "UAM bulk gets" : "UAM bulk stores"
			if (kind[i] ~ /-1$/) what = what " at 1% loss"
			print ""
			if (st[i] != "ok") { printf "%s: FAILED: %s\n", what, why[i]; continue }
			printf "%s (reliable, %s peer memory): %.2f Gbit/s, %s x raw unet 1472 B streaming\n",
				what, (kind[i] ~ /get/) ? "from" : "into", gb[i], r(gb[i], (("unet", 1472) in GB) ? GB["unet", 1472] : "-")
		}
		for (i = 1; i <= n; i++) {
			if (kind[i] !~ /^calls-/) continue
			if (!hdr_calls++) {
				print ""
				print "UAM calls/s (64 B and its echo), loss injected on both interfaces (ratio to no loss, same depth):"
			}
			what = sprintf("%s%% loss, %s in flight", substr(kind[i], 7), ch[i])
			if (st[i] != "ok") { printf "  %-28s FAILED: %s\n", what, why[i]; continue }
			printf "  %-28s %10.0f calls/s %8s\n", what, mps[i], r(mps[i], ((0, ch[i]) in CL) ? CL[0, ch[i]] : "-")
		}
		print ""
		print "Demultiplexing: unet, 64 bytes, N channels open (ratios to 1 channel; to kernel UDP):"
		printf "%8s %-9s %8s %8s  %-13s %8s %8s %8s\n", "channels", "p50 us", "x 1 ch", "x udp",
			"msgs/s", "x 1 ch", "x udp", "x mmsg"
		for (i = 1; i <= n; i++) {
			if (kind[i] != "demux-pingpong") continue
			c = ch[i]; lat = "-"; rate = "-"
			if (st[i] == "ok") lat = p50[i]
			else latw = why[i]
			for (k = 1; k <= n; k++)
				if (kind[k] == "demux-rate" && ch[k] == c) { rate = (st[k] == "ok") ? mps[k] : "FAILED"; ratew = why[k] }
			printf "%8s %-9s %8s %8s  %-13s %8s %8s %8s\n", c,
				(st[i] == "ok") ? f1(lat) : "FAILED",
				r(lat, (D1p == "") ? "-" : D1p), r(lat, base("spin", 64, "p50")),
				(rate == "FAILED") ? "FAILED" : ((rate == "-") ? "-" : sprintf("%.0f", rate)),
				(rate == "FAILED") ? "-" : r(rate, (D1r == "") ? "-" : D1r),
				(rate == "FAILED") ? "-" : r(rate, (64 in UR) ? UR[64] : "-"),
				(rate == "FAILED") ? "-" : r(rate, (64 in MR) ? MR[64] : "-")
			if (st[i] != "ok") printf "         pingpong FAILED: %s\n", latw
			if (rate == "FAILED") printf "         rate FAILED: %s\n", ratew
		}
		print ""
		print "Emulated endpoints (unetd in namespace b, the b side run as nobody): ratios to direct unet and kernel UDP, same run:"
		printf "  %-48s %10s %8s %8s\n", "", "value", "x unet", "x udp"
		for (i = 1; i <= n; i++) {
			if (kind[i] != "pingpong" || (tp[i] != "unet-emul" && tp[i] != "unet-emul-nospin")) continue
			m = md[i]; s = sz[i]
			if (tp[i] == "unet-emul-nospin") m2 = m ", unetd --spin-us 0"; else m2 = m
			if (st[i] != "ok") { printf "  round trip %s, %s B: FAILED: %s\n", m2, s, why[i]; continue }
			printf "  %-48s %10.1f %8s %8s\n", sprintf("round trip p50 us, %s, %s B", m2, s), p50[i],
				r(p50[i], ((m, s, "p50") in UN) ? UN[m, s, "p50"] : "-"), r(p50[i], base(m, s, "p50"))
			printf "  %-48s %10.1f %8s %8s\n", sprintf("round trip p99 us, %s, %s B", m2, s), p99[i],
				r(p99[i], ((m, s, "p99") in UN) ? UN[m, s, "p99"] : "-"), r(p99[i], base(m, s, "p99"))
		}
		for (i = 1; i <= n; i++) {
			if (kind[i] != "rate" || (tp[i] != "unet-emul" && tp[i] != "unet-emul-tx")) continue
			s = sz[i]
			what = sprintf("msgs/s, %s B, unetd %s", s, (tp[i] == "unet-emul") ? "receives" : "sends")
			if (st[i] != "ok") { printf "  %-48s FAILED: %s\n", what, why[i]; continue }
			printf "  %-48s %10.0f %8s %8s\n", what, mps[i],
				r(mps[i], (("unet", s) in RT) ? RT["unet", s] : "-"), r(mps[i], (s in UR) ? UR[s] : "-")
		}
		print ""
		print "Granted direct endpoint (unetd --grant-queues, the b side run as nobody): ratios to direct unet, same run:"
		for (i = 1; i <= n; i++) {
			if (tp[i] != "unet-grant") continue
			if (st[i] != "ok") { printf "  %s %s %s B: FAILED: %s\n", kind[i], md[i], sz[i], why[i]; continue }
			if (kind[i] == "pingpong")
				printf "  %-48s %10.1f %8s %8s\n", sprintf("round trip p50 us, %s, %s B", md[i], sz[i]), p50[i],
					r(p50[i], ((md[i], sz[i], "p50") in UN) ? UN[md[i], sz[i], "p50"] : "-"), r(p50[i], base(md[i], sz[i], "p50"))
			else
				printf "  %-48s %10.0f %8s %8s\n", sprintf("msgs/s, %s B", sz[i]), mps[i],
					r(mps[i], (("unet", sz[i]) in RT) ? RT["unet", sz[i]] : "-"), r(mps[i], (sz[i] in UR) ? UR[sz[i]] : "-")
		}
		print ""
		print "Routable channels (U-Net in UDP/IPv4 to the channel port, on the same link): ratios to raw unet, same run:"
		for (i = 1; i <= n; i++) {
			if (tp[i] != "unet-routable") continue
			if (st[i] != "ok") { printf "  %s %s %s B: FAILED: %s\n", kind[i], md[i], sz[i], why[i]; continue }
			if (kind[i] == "pingpong")
				printf "  %-48s %10.1f %8s\n", sprintf("round trip p50 us, %s, %s B", md[i], sz[i]), p50[i],
					r(p50[i], ((md[i], sz[i], "p50") in UN) ? UN[md[i], sz[i], "p50"] : "-")
			else
				printf "  %-48s %10.0f %8s\n", sprintf("msgs/s, %s B", sz[i]), mps[i],
					r(mps[i], (("unet", sz[i]) in RT) ? RT["unet", sz[i]] : "-")
		}
		print ""
		print "Targets (routable channels against raw unet, this run; both more exactly in the sections below, raw and"
		print "routable in turn):"
		target("routable round trip p50, 64 B, spin", RC["spin", 64, "p50"], UN["spin", 64, "p50"], "<=", 1.1)
		target("routable msgs/s, 64 B", RT["unet-routable", 64], RT["unet", 64], ">=", 0.9)
		print ""
		print "Targets (granted direct endpoint against direct unet, this run):"
		target("granted round trip p50, 64 B, spin", GR["spin", 64, "p50"], UN["spin", 64, "p50"], "<=", 1.05)
		target("granted msgs/s, 64 B", RT["unet-grant", 64], RT["unet", 64], ">=", 0.95)
		print ""
		print "Targets (emulated endpoints against kernel UDP, unet-bench udp, this run):"
		target("emulated round trip p50, 64 B, spin", EM["spin", 64, "p50"], base("spin", 64, "p50"), "<", 1)
		target("same, unetd --spin-us 0", EN["spin", 64, "p50"], base("spin", 64, "p50"), "<", 1)
		target("emulated round trip p50, 64 B, block", EM["block", 64, "p50"], base("block", 64, "p50"), "<", 1)
		print ""
		print "Targets (U-Net against kernel UDP, unet-bench udp, this run):"
		target("round trip p50, 64 B, spinning", UN["spin", 64, "p50"], base("spin", 64, "p50"), "<=", 0.5)
		target("round trip p99, 64 B, spinning", UN["spin", 64, "p99"], base("spin", 64, "p99"), "<=", 0.6)
		target("round trip p50, 64 B, blocking", UN["block", 64, "p50"], base("block", 64, "p50"), "<=", 0.8)
		target("64 B msgs/s vs udp send/recv", RT["unet", 64], RT["udp", 64], ">=", 5)
		target("64 B msgs/s vs udp sendmmsg", RT["unet", 64], RT["udp-mmsg", 64], ">=", 3)
		target("1472 B Gbit/s vs udp send/recv", GB["unet", 1472], GB["udp", 1472], ">=", 1.5)
		target("1472 B Gbit/s vs udp sendmmsg", GB["unet", 1472], GB["udp-mmsg", 1472], ">=", 1.5)
		target(sprintf("p50 with %s channels vs 1", DNc), DNp, D1p, "<=", 1.1)
		target(sprintf("msgs/s with %s channels vs 1", DRc), DNr, D1r, ">=", 0.9)
		print ""
		print "Targets (U-Net Active Messages against raw U-Net, this run; the round trip: the interleaved section below):"
		target("UAM bulk store Gbit/s vs raw 1472 B", BULK, GB["unet", 1472], ">=", 0.9)
		target("same at 1% loss", BULK1, GB["unet", 1472], ">=", 0.8)
		target("UAM bulk get Gbit/s vs raw 1472 B", BULKG, GB["unet", 1472], ">=", 0.9)
		target("same at 1% loss", BULKG1, GB["unet", 1472], ">=", 0.8)
		target("UAM calls/s, 10% loss, 16 in flight", CL[10, 16], CL[0, 16], ">=", 0.5)
		target("UAM calls/s, 10% loss, 1 in flight", CL[10, 1], CL[0, 1], ">=", 0.2)
	}
	function target(what, v, b, op, want,   x, ok) {
		if (v == "" || b == "" || v == "-" || b == "-" || b + 0 <= 0) {
			printf "  %-34s %8s  (target %s %.2fx)  n/a: a measurement failed\n", what, "-", op, want
			return
		}
		x = v / b
		ok = (op == "<=") ? (x <= want) : (op == "<") ? (x < want) : (x >= want)
		printf "  %-34s %7.2fx  (target %s %.2fx)  %s\n", what, x, op, want, ok ? "met" : "NOT met"
	}' "$LOGS/rows.tsv"
} >"$OUT/table.txt"

# The waiting and LogP sections, after the rest of the table.
WAIT_ORDER='["unet", "uam", "unet-udp", "unet-emul", "udp", "udp-napi"]'
jq -r --argjson o "$WAIT_ORDER" '[.results[] | select(.kind == "pingpong" and .size == 64 and
	(.transport as $t | $o | index($t)) != null and (.mode == "spin" or .mode == "block" or .mode == "adaptive"))]
	| sort_by((.transport as $t | $o | index($t)), (.mode as $m | ["spin", "block", "adaptive"] | index($m)))[]
	| [.transport, .mode, .status, .p50_us, .p99_us, .cpu_us_per_msg, .server.cpu_us_per_msg,
	   .waits, .wait_spin_hits, .wait_sleeps, .spin_us, .napi_id, .server.napi_id, .reason]
	| map(. // "-" | tostring) | @tsv' "$OUT/results.json" >"$LOGS/wait.tsv"
jq -r '[.results[] | select(.kind == "logp")] | sort_by(.transport, .size)[]
	| [.transport, .size, .status, .os_us, .or_us, .L_us, .g_us, .rtt_us, .reason]
	| map(. // "-" | tostring) | @tsv' "$OUT/results.json" >"$LOGS/logp.tsv"
{
	awk -F'\t' '
	function r(v, base) { return (v == "-" || base == "-" || base + 0 <= 0) ? "-" : sprintf("%.2fx", v / base) }
	function f(v, p) { return (v == "-") ? "-" : sprintf("%.*f", p, v) }
	{ n++; tp[n] = $1; md[n] = $2; st[n] = $3; p50[n] = $4; p99[n] = $5; cc[n] = $6; sc[n] = $7
	  w[n] = $8; h[n] = $9; sl[n] = $10; sp[n] = $11; na[n] = $12; sna[n] = $13; why[n] = $14
	  if ($3 == "ok") P[$1, $2] = $4 }
	END {
		ub = ((("udp", "block") in P) ? P["udp", "block"] : "-")
		print ""
		print "Waiting, 64-byte round trips: spin (poll, never sleep), block (sleep at once), adaptive"
		print "(spin up to the budget, then sleep: unet_endpoint__set_spin_us; kernel UDP: SO_BUSY_POLL);"
		print "CPU per round trip on each side (getrusage user+sys / messages); ratios to kernel UDP blocking:"
		printf "%-10s %-8s %9s %9s %9s %10s %10s  %s\n", "transport", "mode", "p50 us", "x udp blk", "p99 us",
			"cpu cli", "cpu srv", "waits: caught spinning / slept (client), budget"
		for (i = 1; i <= n; i++) {
			if (st[i] != "ok") { printf "%-10s %-8s FAILED: %s\n", tp[i], md[i], why[i]; continue }
			extra = ""
			if (w[i] != "-") extra = sprintf("%s / %s of %s, %s us", h[i], sl[i], w[i], sp[i])
			if (na[i] != "-") extra = sprintf("SO_BUSY_POLL; NAPI id %s / %s%s", na[i], sna[i],
				(na[i] == "0") ? " (none: busy polling cannot run)" : "")
			printf "%-10s %-8s %9s %9s %9s %10s %10s  %s\n", tp[i], md[i], f(p50[i], 1), r(p50[i], ub),
				f(p99[i], 1), f(cc[i], 2), f(sc[i], 2), extra
		}
		print ""
		print "Targets (adaptive wait against kernel UDP blocking, this run):"
		target("unet adaptive p50 vs udp block", P["unet", "adaptive"], ub, 0.6)
		target("uam adaptive p50 vs udp block", P["uam", "adaptive"], ub, 0.6)
		target("unet adaptive p50 vs udp busy poll", P["unet", "adaptive"],
			((("udp-napi", "adaptive") in P) ? P["udp-napi", "adaptive"] : "-"), 1)
	}
	function target(what, v, b, want,   x) {
		if (v == "" || b == "" || v == "-" || b == "-" || b + 0 <= 0) {
			printf "  %-36s %8s  (target <= %.2fx)  n/a: a measurement failed\n", what, "-", want
			return
		}
		x = v / b
		printf "  %-36s %7.2fx  (target <= %.2fx)  %s\n", what, x, want, (x <= want) ? "met" : "NOT met"
	}' "$LOGS/wait.tsv"
	awk -F'\t' '
	function f(v) { return (v == "-") ? "-" : sprintf("%.2f", v) }
	BEGIN {
		print ""
		print "LogP, us (o_s: a send call; o_r: a receive call with the message there; L = rtt/2 - o_s - o_r;"
		print "g = 1 / msgs_per_s of the rate rows; negative L: the send call itself carries the frame to the"
		print "peer, as veth runs the receive path inside the sender'"'"'s system call: docs/performance.md):"
		printf "%-10s %5s %8s %8s %8s %8s %9s\n", "transport", "bytes", "o_s", "o_r", "L", "g", "rtt p50"
	}
	{
		if ($3 != "ok") { printf "%-10s %5s  FAILED: %s\n", $1, $2, $9; next }
		printf "%-10s %5s %8s %8s %8s %8s %9s\n", $1, $2, f($4), f($5), f($6), f($7), f($8)
	}' "$LOGS/logp.tsv"
} >>"$OUT/table.txt"
# UAM against raw U-Net interleaved (m_vs): the UAM round-trip target,
# <= 1.15x raw U-Net at every size.
jq -r '.results[] | select(.kind == "vs") | [.size, .status, .p50_ratio, .p50_ratio_min,
	.p50_ratio_max, .runs, .p50_us, .vs_p50_us, .reason] | map(. // "-" | tostring) | @tsv' \
	"$OUT/results.json" >"$LOGS/vs.tsv" 2>/dev/null
if [[ -s $LOGS/vs.tsv ]]; then
	awk -F'\t' '
	BEGIN {
		print ""
		print "UAM against raw U-Net, interleaved in one process pair (pingpong --vs; median of the runs):"
	}
	$2 != "ok" { printf "  round trip p50, %s B: FAILED: %s\n", $1, $9; next }
	{
		printf "  round trip p50, %s B: %.3fx [%.2f-%.2f] over %d runs (%.2f vs %.2f us)  (target <= 1.15x)  %s\n",
			$1, $3, $4, $5, $6, $7, $8, ($3 <= 1.15) ? "met" : "NOT met"
	}' "$LOGS/vs.tsv" >>"$OUT/table.txt"
fi

# A routable channel against a raw one interleaved (m_vs_routable): the
# routable round-trip target, <= 1.1x.
jq -r '.results[] | select(.kind == "vs-routable") | [.size, .status, .p50_ratio, .p50_ratio_min,
	.p50_ratio_max, .runs, .p50_us, .vs_p50_us, .reason, .aa_ratio, .p50_ratio_net]
	| map(. // "-" | tostring) | @tsv' \
	"$OUT/results.json" >"$LOGS/vs-routable.tsv" 2>/dev/null
if [[ -s $LOGS/vs-routable.tsv ]]; then
	awk -F'\t' '
	BEGIN {
		print ""
		print "Routable channel against raw, interleaved in one process pair (pingpong --peer-ip --vs; median of the runs;"
		print "net: divided by a raw channel against a raw one the same way, the two sides\047 own difference):"
	}
	$2 != "ok" { printf "  round trip p50, %s B: FAILED: %s\n", $1, $9; next }
	{
		net = ($11 == "-") ? $3 : $11
		printf "  round trip p50, %s B: %.3fx [%.2f-%.2f] over %d runs (%.2f vs %.2f us), raw/raw %sx, net %.3fx  (target <= 1.10x)  %s\n",
			$1, $3, $4, $5, $6, $7, $8, $10, net, (net <= 1.1) ? "met" : "NOT met"
	}' "$LOGS/vs-routable.tsv" >>"$OUT/table.txt"
fi

# Routable against raw message rate, pairings in turn (m_rate_ab): the
# rate target, >= 0.9x.
jq -r '.results[] | select(.kind == "rate-ab") | [.size, .status, .msgs_per_s_ratio,
	.msgs_per_s_ratio_min, .msgs_per_s_ratio_max, .runs, .msgs_per_s, .vs_msgs_per_s, .reason]
	| map(. // "-" | tostring) | @tsv' "$OUT/results.json" >"$LOGS/rate-ab.tsv" 2>/dev/null
if [[ -s $LOGS/rate-ab.tsv ]]; then
	awk -F'\t' '
	BEGIN {
		print ""
		print "Routable channel against raw, message rate, pairings in turn (median of the pairings\047 ratios):"
	}
	$2 != "ok" { printf "  msgs/s, %s B: FAILED: %s\n", $1, $9; next }
	{
		printf "  msgs/s, %s B: %.3fx [%.2f-%.2f] over %d pairings (%.0f vs %.0f)  (target >= 0.90x)  %s\n",
			$1, $3, $4, $5, $6, $7, $8, ($3 >= 0.9) ? "met" : "NOT met"
	}' "$LOGS/rate-ab.tsv" >>"$OUT/table.txt"
fi
# Across a router and over IPv6: every row against kernel UDP the same
# way in this run (udp; for rates udp-mmsg too); a routable channel
# across the router held to the one-link targets of raw U-Net against
# kernel UDP (the section "Targets (U-Net against kernel UDP ...)").
awk -F'\t' '
function r(v, b) { return (v == "" || b == "" || v == "-" || b == "-" || b + 0 <= 0) ? "-" : sprintf("%.2fx", v / b) }
$1 ~ /^(pingpong|rate)-(routed|v6)$/ {
	n++; K[n] = $1; T[n] = $2; M[n] = $3; S[n] = $4; ST[n] = $6; P50[n] = $8; P99[n] = $10
	MPS[n] = $14; GB[n] = $15; LOST[n] = $16; WHY[n] = $18; V[n] = ($1 ~ /routed/) ? "routed" : "v6"
	if ($6 == "ok" && $1 ~ /^pingpong/) { PP[V[n], $2, $3, "p50"] = $8; PP[V[n], $2, $3, "p99"] = $10 }
	if ($6 == "ok" && $1 ~ /^rate/) { RM[V[n], $2, $4] = $14; RG[V[n], $2, $4] = $15 }
}
$1 == "pingpong" && $6 == "ok" && $2 == "unet-udp" { V4P[$3, $4] = $8 }
$1 == "rate" && $6 == "ok" && $2 == "unet-udp" { V4R[$4] = $14 }
function get(a, k) { return (k in a) ? a[k] : "-" }
function section(v,   i, b) {
	print ""
	if (v == "routed")
		print "Across a router (a -> b, which routes -> c on another subnet; the echo and the sink in c): ratios to kernel UDP through the same router, same run:"
	else
		print "Over IPv6 on the link (fd00:201::1 -> ::2): ratios to kernel UDP/IPv6, same run" (v6ratio ? "; unet-udp also to its IPv4 rows:" : ":")
	printf "  %-14s %-6s %5s %9s %7s %9s %7s%s\n", "round trip", "mode", "bytes", "p50 us", "x udp", "p99 us", "x udp",
		(v == "v6") ? "  x unet-udp IPv4" : ""
	for (i = 1; i <= n; i++) {
		if (V[i] != v || K[i] !~ /^pingpong/) continue
		if (ST[i] != "ok") { printf "  %-14s %-6s %5s  FAILED: %s\n", T[i], M[i], S[i], WHY[i]; continue }
		printf "  %-14s %-6s %5s %9.1f %7s %9.1f %7s%s\n", T[i], M[i], S[i],
			P50[i], r(P50[i], get(PP, v SUBSEP "udp" SUBSEP M[i] SUBSEP "p50")),
			P99[i], r(P99[i], get(PP, v SUBSEP "udp" SUBSEP M[i] SUBSEP "p99")),
			(v == "v6" && T[i] == "unet-udp") ? sprintf("  %s", r(P50[i], get(V4P, M[i] SUBSEP S[i]))) : ""
	}
	printf "  %-14s %-6s %5s %12s %8s %7s %7s %s\n", "one-way rate", "", "bytes", "msgs/s", "Gbit/s", "x udp", "x mmsg", "lost"
	for (i = 1; i <= n; i++) {
		if (V[i] != v || K[i] !~ /^rate/) continue
		if (ST[i] != "ok") { printf "  %-14s %-6s %5s  FAILED: %s\n", T[i], "", S[i], WHY[i]; continue }
		printf "  %-14s %-6s %5s %12.0f %8.2f %7s %7s %s\n", T[i], "", S[i], MPS[i], GB[i],
			r(MPS[i], get(RM, v SUBSEP "udp" SUBSEP S[i])), r(MPS[i], get(RM, v SUBSEP "udp-mmsg" SUBSEP S[i])), LOST[i]
	}
}
function target(what, v, b, op, want,   x, ok) {
	if (v == "" || b == "" || v == "-" || b == "-" || b + 0 <= 0) {
		printf "  %-38s %8s  (target %s %.2fx)  n/a: not measured or failed\n", what, "-", op, want
		return
	}
	x = v / b
	ok = (op == "<=") ? (x <= want) : (x >= want)
	printf "  %-38s %7.2fx  (target %s %.2fx)  %s\n", what, x, op, want, ok ? "met" : "NOT met"
}
END {
	if (!n) exit
	for (i = 1; i <= n; i++) { if (V[i] == "routed") hr = 1; if (V[i] == "v6") { h6 = 1; if (T[i] == "unet-udp") v6ratio = 1 } }
	if (hr) {
		section("routed")
		print ""
		print "Targets (a routable channel against kernel UDP through the same router, this run: the one-link targets of raw U-Net):"
		target("routed round trip p50, 64 B, spinning", get(PP, "routed" SUBSEP "unet-routable" SUBSEP "spin" SUBSEP "p50"),
			get(PP, "routed" SUBSEP "udp" SUBSEP "spin" SUBSEP "p50"), "<=", 0.5)
		target("routed round trip p99, 64 B, spinning", get(PP, "routed" SUBSEP "unet-routable" SUBSEP "spin" SUBSEP "p99"),
			get(PP, "routed" SUBSEP "udp" SUBSEP "spin" SUBSEP "p99"), "<=", 0.6)
		target("routed round trip p50, 64 B, blocking", get(PP, "routed" SUBSEP "unet-routable" SUBSEP "block" SUBSEP "p50"),
			get(PP, "routed" SUBSEP "udp" SUBSEP "block" SUBSEP "p50"), "<=", 0.8)
		target("routed 64 B msgs/s vs udp send/recv", get(RM, "routed" SUBSEP "unet-routable" SUBSEP 64),
			get(RM, "routed" SUBSEP "udp" SUBSEP 64), ">=", 5)
		target("routed 64 B msgs/s vs udp sendmmsg", get(RM, "routed" SUBSEP "unet-routable" SUBSEP 64),
			get(RM, "routed" SUBSEP "udp-mmsg" SUBSEP 64), ">=", 3)
		target("routed 1464 B Gbit/s vs udp send/recv", get(RG, "routed" SUBSEP "unet-routable" SUBSEP 1464),
			get(RG, "routed" SUBSEP "udp" SUBSEP 1464), ">=", 1.5)
		target("routed 1464 B Gbit/s vs udp sendmmsg", get(RG, "routed" SUBSEP "unet-routable" SUBSEP 1464),
			get(RG, "routed" SUBSEP "udp-mmsg" SUBSEP 1464), ">=", 1.5)
	}
	if (h6) section("v6")
}' "$LOGS/rows.tsv" >>"$OUT/table.txt"
# TCP over U-Net against kernel TCP, same run (targets, docs/tcp.md: round
# trip p50 <= 0.7x kernel TCP spinning, bulk >= 1.0x).
jq -r '
	def pick(k; t; m): [.results[] | select(.kind == k and .transport == t and .mode == m
		and .status == "ok")] | first;
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else "\(a / b * 100 | round / 100)x" end;
	"", "TCP over U-Net (unet-tcp) against kernel TCP (tcp), same run:",
	(["spin", "block"][] as $m | pick("pingpong"; "unet-tcp"; $m) as $u | pick("pingpong"; "tcp"; $m) as $k |
	 "  64 B round trip, \($m): p50 \($u.p50_us // "-") us vs \($k.p50_us // "-") us = \(ratio($u.p50_us; $k.p50_us))"),
	(pick("rate"; "unet-tcp"; "spin") as $u | pick("rate"; "tcp"; "spin") as $k |
	 "  bulk, one connection: \($u.gbit_s // "-") Gbit/s vs \($k.gbit_s // "-") Gbit/s = \(ratio($u.gbit_s; $k.gbit_s))"),
	(pick("rate"; "unet-tcp"; "spin") as $u | pick("rate"; "tcp"; "spin") as $k |
	 pick("rate-jumbo"; "unet-tcp"; "spin") as $uj | pick("rate-jumbo"; "tcp"; "spin") as $kj |
	 "  bulk at MTU 9000: \($uj.gbit_s // "-") Gbit/s vs \($kj.gbit_s // "-") Gbit/s = \(ratio($uj.gbit_s; $kj.gbit_s))",
	 "  MTU 9000 over MTU 1500: unet-tcp \(ratio($uj.gbit_s; $u.gbit_s)), tcp \(ratio($kj.gbit_s; $k.gbit_s))"),
	(pick("rate-jumbo"; "unet"; "spin") as $r | pick("rate-jumbo"; "tcp"; "spin") as $kj |
	 "  raw U-Net streaming of 8992-byte messages at MTU 9000: \($r.gbit_s // "-") Gbit/s vs kernel TCP bulk (1472-byte writes) \($kj.gbit_s // "-") Gbit/s = \(ratio($r.gbit_s; $kj.gbit_s)) (target >= 1.0x)"),
	(pick("rate-jumbo"; "unet"; "spin") as $r | pick("iperf3-jumbo"; "tcp"; "spin") as $ki |
	 "  the same vs kernel TCP bulk with iperf3'"'"'s 128 KiB writes \($ki.gbit_s // "-") Gbit/s = \(ratio($r.gbit_s; $ki.gbit_s)) (the kernel'"'"'s best: 64 KiB segments cross the veth as one)")
' "$OUT/results.json" >>"$OUT/table.txt" 2>/dev/null || true
# Transmit checksums asked of the device (AF_XDP TX metadata; on veth the
# receiver takes them partial) against computed in software (-sw), same
# run: message rate and the sender's CPU per message.
jq -r '
	def pick(t; s): [.results[] | select(.kind == "rate" and .transport == t and .size == s
		and .status == "ok")] | first;
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else "\(a / b * 100 | round / 100)x" end;
	"", "Transmit checksums by the device (default) against software (-sw), same run:",
	(["unet-udp", "unet-tcp"][] as $t | [64, 1472][] as $s | pick($t; $s) as $d |
	 pick($t + "-sw"; $s) as $w | select($d != null or $w != null) |
	 "  \($t) \($s) B: \($d.msgs_per_s // "-" | if type == "number" then floor else . end) vs \($w.msgs_per_s // "-" | if type == "number" then floor else . end) msgs/s = \(ratio($d.msgs_per_s; $w.msgs_per_s))" +
	 " (device used: \($d.source.tx_csum_offload // "-") / \($w.source.tx_csum_offload // "-"))")
' "$OUT/results.json" >>"$OUT/table.txt" 2>/dev/null || true
cat "$OUT/table.txt"

# ---- plots -------------------------------------------------------------------

PLOT_FAIL=0
PLOT_SUB="veth, XDP $XDP_MODE mode, $(uname -r), $NCPU CPUs, $(date -u +%F)"
# Colour per transport, dash per mode, the same in both plots.
plot_style() {
	local lc dt=1
	case $1 in
	unet) lc=1 ;; udp) lc=2 ;; packet) lc=3 ;; sockperf) lc=4 ;; uam) lc=5 ;; udp-mmsg) lc=6 ;; *) lc=7 ;;
	esac
	[[ ${2:-} == block ]] && dt=2
	[[ ${2:-} == adaptive ]] && dt=3
	echo "lc $lc dt $dt pt $lc"
}

# Latency: percentiles at 64 bytes, one line per transport and mode.
# Data: a header row of series names, then one row per percentile.
jq -r '
	[.results[] | select(.status == "ok" and .size == 64 and
		(.kind == "pingpong" or .kind == "sockperf"))] as $r |
	(["percentile"] + ($r | map("\(.transport) \(.mode)"))) | join("\t"),
	(["min", "p50", "p90", "p99", "p99.9", "max"] | to_entries[] | .value as $lab |
	 (["min_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"][.key]) as $k |
	 ([$lab] + ($r | map(.[$k] // "?" | tostring))) | join("\t"))
' "$OUT/results.json" >"$LOGS/latency.dat"
PL=""
col=1
while read -r tname tmode; do
	col=$((col + 1))
	PL+="${PL:+, }\"$LOGS/latency.dat\" using 0:$col:xtic(1) with linespoints lw 2 $(plot_style "$tname" "$tmode") title \"$tname $tmode\""
done < <(head -n 1 "$LOGS/latency.dat" | tr '\t' '\n' | tail -n +2)
if [[ -n $PL ]]; then
	bench_plot "$OUT/latency.png" "$LOGS/gnuplot-latency.log" <<EOP || PLOT_FAIL=1
set title "Round trip, 64-byte messages (solid: spinning, dashed: blocking, dotted: adaptive)\n$PLOT_SUB"
set ylabel "round trip, us (log scale)"
set xlabel "percentile"
set logscale y
set grid ytics mytics
set key outside right
set datafile separator "\t"
set datafile missing "?"
plot $PL
EOP
else
	echo "bench: no 64-byte round trip succeeded: no latency plot" >&2
	PLOT_FAIL=1
fi

# Bandwidth: Gbit/s against message size, one line per transport.
jq -r '
	[.results[] | select(.status == "ok" and .kind == "rate")] as $r |
	["unet", "uam", "udp", "udp-mmsg", "packet"] as $t |
	(["size"] + $t) | join("\t"),
	($r | map(.size) | unique[] as $s |
	 ([$s | tostring] + ($t | map(. as $x | [$r[] | select(.transport == $x and .size == $s) | .gbit_s][0] // "?" | tostring)))
	 | join("\t"))
' "$OUT/results.json" >"$LOGS/bandwidth.dat"
if (($(wc -l <"$LOGS/bandwidth.dat") > 1)); then
	PL=""
	col=1
	for tname in unet uam udp udp-mmsg packet; do
		col=$((col + 1))
		PL+="${PL:+, }\"$LOGS/bandwidth.dat\" using 1:$col with linespoints lw 2 $(plot_style "$tname") title \"$tname\""
	done
	bench_plot "$OUT/bandwidth.png" "$LOGS/gnuplot-bandwidth.log" <<EOP || PLOT_FAIL=1
set title "One-way bandwidth, batched sends, received payload\n$PLOT_SUB"
set ylabel "Gbit/s"
set xlabel "message size, bytes (log scale)"
set logscale x 2
set xtics (8, 64, 256, 1024, 1472)
set grid
set key top left reverse Left
set datafile separator "\t"
set datafile missing "?"
plot $PL
EOP
else
	echo "bench: no rate measurement succeeded: no bandwidth plot" >&2
	PLOT_FAIL=1
fi
# LogP: o_s, o_r, L and g against message size, one line per transport.
LOGP_T=(unet uam unet-udp udp)
jq -r --argjson t "$(printf '%s\n' "${LOGP_T[@]}" | jq -R . | jq -sc .)" '
	[.results[] | select(.status == "ok" and .kind == "logp")] as $r |
	($r | map(.size) | unique[]) as $s |
	([$s | tostring] + ([$t[] as $x | ["os_us", "or_us", "L_us", "g_us"][] as $k |
		([$r[] | select(.transport == $x and .size == $s) | .[$k]][0] // "?" | tostring)]))
	| join("\t")' "$OUT/results.json" >"$LOGS/logp.dat"
if [[ -s $LOGS/logp.dat ]]; then
	LP_PLOTS=""
	pi=0
	for par in "o_s (send call)" "o_r (receive call)" "L = rtt/2 - o_s - o_r" "g (1 / msgs per s)"; do
		PL=""
		ti=0
		for tname in "${LOGP_T[@]}"; do
			col=$((2 + ti * 4 + pi))
			PL+="${PL:+, }\"$LOGS/logp.dat\" using 1:$col with linespoints lw 2 $(plot_style "$tname") title \"$tname\""
			ti=$((ti + 1))
		done
		LP_PLOTS+="set title \"$par\""$'\n'"plot $PL"$'\n'
		pi=$((pi + 1))
	done
	bench_plot "$OUT/logp.png" "$LOGS/gnuplot-logp.log" 1200,900 10 <<EOP || PLOT_FAIL=1
set datafile separator "\t"
set datafile missing "?"
set logscale x 2
set xtics (8, 64, 256, 1024, 1472) rotate by -45
set xlabel "message size, bytes"
set ylabel "us"
set grid
set key top left
set multiplot layout 2,2 title "LogP parameters\n$PLOT_SUB"
$LP_PLOTS
unset multiplot
EOP
else
	echo "bench: no LogP measurement succeeded: no LogP plot" >&2
	PLOT_FAIL=1
fi
for f in latency bandwidth logp; do
	if [[ ! -s $OUT/$f.png ]]; then
		echo "bench: $OUT/$f.png was not made" >&2
		[[ -s $LOGS/gnuplot-$f.log ]] && sed 's/^/    /' "$LOGS/gnuplot-$f.log" >&2
		PLOT_FAIL=1
	fi
done

echo
echo "bench: $NPLAN measurements in ${ELAPSED}s, $NFAIL failed; XDP $XDP_MODE mode"
echo "bench: wrote $OUT/results.json, $OUT/table.txt, $OUT/latency.png, $OUT/bandwidth.png, $OUT/logp.png"
if ((NFAIL > 0 || PLOT_FAIL)); then
	echo "bench: FAILED: $NFAIL measurement(s) failed$( ((PLOT_FAIL)) && echo ", plots incomplete")" >&2
	exit 1
fi
exit 0
}
