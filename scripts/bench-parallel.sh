#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-parallel.sh [--quick] [--out DIR] [--nets LIST] [--mtu M] [--subnets 2] [--pingpong-only] BUILD_DIR -
# `make bench-parallel`: the MPI programs of examples/parallel over U-Net
# and over the kernel's paths, side by side, in one run on one set of
# namespace hosts (scripts/hosts.sh, 8 hosts on a bridge, skb mode).
#
# Transports (hosts.sh --net), in this order, each with the same programs:
#   unet     Open MPI cm/ofi MTL over our libfabric provider `unet`
#   ofi-tcp  the same over libfabric's tcp provider (tcp;ofi_rxm): the
#            reference every ratio is taken against
#   ofi-udp  the same over libfabric's udp provider (udp;ofi_rxd)
#   tcp      Open MPI's ob1 PML with its tcp BTL
# Programs:
#   pingpong   2 ranks: one-way latency (min, p50, p90) and bandwidth by
#              size, 8 B .. 1 MiB (4 KiB in --quick)
#   allreduce  8 ranks: MPI_Allreduce of one double, p50 for 2, 4, 8 ranks
#   ring       4 ranks: an 8-byte token around the ranks (one hop, p50)
#              and MPI_Alltoall of 64 KiB to every rank (p50 per call)
#   pingpong   again on 4 ranks (2 of them idle in a barrier), 64 KiB ..
#              1 MiB: with more ranks than CPUs, the waiting ranks must
#              leave the CPUs to the pair
#   mm, ssort-bulk, ssort-small, rsort-bulk, rsort-small, cc, cg
#              4 ranks: the paper's Split-C benchmarks, wall time (the
#              slowest rank), median of 3 runs (1 in --quick)
#
# Writes DIR/results.json ({"machine": {...}, "run": {...}, "results":
# [every RESULT line, with "net"]}), DIR/table.txt (printed too: every
# figure per transport and unet's ratios to ofi-tcp and tcp, and where the targets
# stand: ping-pong p50 at 8 B <= 0.6x ofi-tcp; each Split-C program
# faster over unet than over ofi-tcp), DIR/latency.png and
# DIR/splitc.png (gnuplot).  A job that fails (or the missing provider)
# is reported as failed and the run goes on; exit 1 at the end if
# anything failed, 2 on usage errors.  Needs root.  Everything it creates
# is removed on exit, even on failure.
#
#   --quick      small sizes and counts: a form check (about a minute)
#   --out DIR    where to write (default bench-results/parallel)
#   --nets LIST  comma-separated subset of the transports
#   --mtu M      every link at MTU M (default 1500; 9000: jumbo frames,
#                where the provider's eager messages and rendezvous
#                fragments grow to the MTU)
#   --subnets 2  the hosts on two subnets with a router between them
#                (hosts.sh up --subnets 2): ranks 0 and 1, and every
#                pair of neighbours, talk through it; over unet, on
#                routable channels (U-Net in UDP/IPv4).  make
#                bench-parallel runs every program so over unet and the
#                tcp BTL; --quick (make check's form check) is not run
#                so: 8 more hosts and every program again would cost far
#                more than the 3 s make check has for new rows
#   --pingpong-only  the 2-rank ping-pong alone (latency and bandwidth)
#   --from JSON  measure nothing: the table and plots of an earlier
#                results.json (needs no root)
set -uo pipefail

{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
HOSTS_SH="$HERE/hosts.sh"
# shellcheck source=scripts/bench-common.sh
source "$HERE/bench-common.sh"

usage() { echo "usage: $0 [--quick] [--out DIR] [--nets unet,ofi-tcp,ofi-udp,tcp] [--mtu M] [--subnets 2] [--pingpong-only] BUILD_DIR | --from JSON [--out DIR]"; }
die() { echo "bench-parallel: $*" >&2; exit 1; }

QUICK=0 OUT="" BUILD="" NETS="unet,ofi-tcp,ofi-udp,tcp" FROM="" MTU=1500 PP_ONLY=0 SUBNETS=1
while (($#)); do
	case $1 in
	--quick) QUICK=1; shift ;;
	--out) [[ -n ${2:-} ]] || { usage >&2; exit 2; }; OUT=$2; shift 2 ;;
	--nets) [[ -n ${2:-} ]] || { usage >&2; exit 2; }; NETS=$2; shift 2 ;;
	--mtu) [[ ${2:-} =~ ^[0-9]+$ ]] || { usage >&2; exit 2; }; MTU=$2; shift 2 ;;
	--pingpong-only) PP_ONLY=1; shift ;;
	--subnets) [[ ${2:-} == 1 || ${2:-} == 2 ]] || { usage >&2; exit 2; }; SUBNETS=$2; shift 2 ;;
	--from) [[ -f ${2:-} ]] || { echo "bench-parallel: --from needs a results.json" >&2; exit 2; }; FROM=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "bench-parallel: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) [[ -z $BUILD ]] || { usage >&2; exit 2; }; BUILD=$1; shift ;;
	esac
done
[[ -n $BUILD || -n $FROM ]] || { usage >&2; exit 2; }
[[ $BUILD = /* ]] || BUILD="$PWD/$BUILD"
OUT=${OUT:-$ROOT/bench-results/parallel}
[[ $OUT = /* ]] || OUT="$PWD/$OUT"
IFS=, read -r -a NET_LIST <<<"$NETS"
for n in "${NET_LIST[@]}"; do
	case $n in unet | ofi-tcp | ofi-udp | tcp) ;; *) echo "bench-parallel: unknown transport $n" >&2; exit 2 ;; esac
done
for c in jq awk gnuplot column; do
	command -v "$c" >/dev/null 2>&1 || die "missing $c (scripts/install-deps.sh installs it)"
done
mkdir -p "$OUT" || die "cannot create $OUT"
LOGS=$(mktemp -d /tmp/unet-bench-parallel.XXXXXX) || die "mktemp failed"
RESULTS="$LOGS/results.jsonl"
: >"$RESULTS"
NAME="bp$$"
NFAIL=0

cleanup() {
	[[ -n $FROM ]] || "$HOSTS_SH" down "$NAME"
	bench_logs_done bench-parallel "$LOGS"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- what to measure ---------------------------------------------------

if ((QUICK)); then
	REPS=1 PP_ITERS=200 PP_MAX=4096 AR_ITERS=200 TO=60
	RING=(--rounds 200 --warmup 20 --a2a-bytes 65536 --a2a-iters 5) PP4=(--iters 20 --warmup 5 --maxsize 65536)
	SPLITC=("mm|mm --blocks 4 --bsize 16" "ssort-bulk|ssort --keys 4096" "ssort-small|ssort --mode small --keys 1024"
		"rsort-bulk|rsort --keys 4096" "rsort-small|rsort --mode small --keys 512" "cc|cc --rows 128 --cols 128"
		"cg|cg --grid 64")
else
	REPS=3 PP_ITERS=${BENCH_PP_ITERS:-5000} PP_MAX=1048576 AR_ITERS=${BENCH_AR_ITERS:-2000} TO=300
	RING=(--rounds 5000 --warmup 200 --a2a-bytes 65536 --a2a-iters 50) PP4=(--iters 500 --warmup 20 --maxsize 1048576)
	SPLITC=("mm|mm --blocks 4 --bsize 64" "ssort-bulk|ssort --keys 262144" "ssort-small|ssort --mode small --keys 8192"
		"rsort-bulk|rsort --keys 262144" "rsort-small|rsort --mode small --keys 4096" "cc|cc --rows 512 --cols 512"
		"cg|cg --grid 256")
fi

if [[ -n $FROM ]]; then
	[[ $FROM -ef $OUT/results.json ]] || cp "$FROM" "$OUT/results.json" || die "cannot copy $FROM"
	QUICK=$(jq -r 'if .run.quick then 1 else 0 end' "$OUT/results.json")
	NFAIL=$(jq -r '.run.failed' "$OUT/results.json")
	ELAPSED=$(jq -r '.run.seconds' "$OUT/results.json")
	LOAD_START=$(jq -r '.machine.loadavg_before' "$OUT/results.json")
	mapfile -t NET_LIST < <(jq -r '[.results[].net] | unique | (["unet", "ofi-tcp", "ofi-udp", "tcp"] - (["unet", "ofi-tcp", "ofi-udp", "tcp"] - .))[]' "$OUT/results.json")
else
[[ $(id -u) -eq 0 ]] || die "needs root (namespaces, XDP)"
command -v mpirun >/dev/null 2>&1 || die "missing mpirun (scripts/install-deps.sh installs openmpi-bin)"
P="$BUILD/parallel"
[[ -x $P/cg && -x $BUILD/unetctl ]] || die "missing $P/cg or $BUILD/unetctl: run 'make' first"
echo "bench-parallel: 8 namespace hosts ($NAME) at MTU $MTU on $SUBNETS subnet(s), transports: ${NET_LIST[*]}" >&2
"$HOSTS_SH" up 8 --name "$NAME" --build "$BUILD" --mode skb --mtu "$MTU" --subnets "$SUBNETS" >"$LOGS/up.log" 2>&1 ||
	{ cat "$LOGS/up.log" >&2; die "hosts.sh up 8 failed"; }
LOAD_START=$(cut -d' ' -f1 /proc/loadavg)

# job NET LABEL NP PROG ARGS...: one MPI job; its RESULT lines (with
# "net") go to the results; a failure is recorded as
# {"net", "prog": LABEL, "failed": true}.
job() {
	local net=$1 label=$2 np=$3 prog=$4 log rc
	shift 4
	log="$LOGS/$net-$label.$RANDOM.log"
	echo "bench-parallel: $net $label" >&2
	if [[ $net == unet && ! -f $BUILD/libunet-fi.so ]]; then
		echo "provider $BUILD/libunet-fi.so not built" >"$log"
		rc=1
	else
		# Waited for in the background, so a TERM or INT ends the run
		# at once (the EXIT trap takes the hosts and the job down).
		"$HOSTS_SH" mpirun "$NAME" --net "$net" --np "$np" --timeout "$TO" -- "$P/$prog" "$@" >"$log" 2>&1 &
		wait $!
		rc=$?
	fi
	if ((rc == 0)) && grep -q '^RESULT .*"ok":true' "$log"; then
		sed -n 's/^RESULT //p' "$log" | jq -c --arg net "$net" '. + {net: $net}' >>"$RESULTS"
	else
		echo "bench-parallel: $net $label FAILED (exit $rc): $(grep -v '^\s*$' "$log" | tail -n 2 | tr '\n' ' ')" >&2
		jq -nc --arg net "$net" --arg prog "$label" '{net: $net, prog: $prog, failed: true}' >>"$RESULTS"
		NFAIL=$((NFAIL + 1))
	fi
}

START=$SECONDS
for net in "${NET_LIST[@]}"; do
	job "$net" pingpong 2 mpi_pingpong --iters "$PP_ITERS" --warmup 200 --maxsize "$PP_MAX"
	((PP_ONLY)) && continue
	job "$net" allreduce 8 mpi_allreduce --iters "$AR_ITERS"
	job "$net" ring 4 mpi_ring "${RING[@]}"
	job "$net" pingpong-4 4 mpi_pingpong "${PP4[@]}"
	for ((r = 0; r < REPS; r++)); do
		for s in "${SPLITC[@]}"; do
			# shellcheck disable=SC2086
			job "$net" "${s%%|*}" 4 ${s#*|}
		done
	done
done
ELAPSED=$((SECONDS - START))

# ---- results.json ------------------------------------------------------

WHERE="one Linux bridge"
((SUBNETS == 2)) && WHERE="two subnets (two Linux bridges) with a router namespace between them"
jq -s --arg kernel "$(uname -r)" --argjson nproc "$(nproc)" --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--arg cpu "$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)" \
	--arg host "$(uname -n)" --arg l0 "$LOAD_START" --argjson quick "$QUICK" --argjson secs "$ELAPSED" \
	--argjson reps "$REPS" --argjson failed "$NFAIL" --arg mtu "$MTU" --arg mpi "$(mpirun --version 2>/dev/null | head -n 1)" \
	--arg where "$WHERE" \
	--argjson subnets "$SUBNETS" \
	'{machine: {kernel: $kernel, nproc: $nproc, cpu: $cpu, host: $host, date: $date, mpi: $mpi,
		    hosts: "network namespaces on \($where), veth, XDP skb mode, MTU \($mtu)", mtu: ($mtu | tonumber),
		    subnets: $subnets,
		    loadavg_before: ($l0 | tonumber)},
	  run: {quick: ($quick == 1), seconds: $secs, splitc_reps: $reps, failed: $failed},
	  results: .}' "$RESULTS" >"$OUT/results.json.tmp" && mv "$OUT/results.json.tmp" "$OUT/results.json" ||
	die "cannot write $OUT/results.json"
fi

# ---- the table ---------------------------------------------------------
#
# One row per figure, one column per transport, then unet's ratio to
# ofi-tcp (the reference the targets name) and to Open MPI's tcp BTL (the fastest
# kernel path here).
# Split-C rows are the median of the runs.  "-" = not measured or failed.

NETS_JSON=$(printf '%s\n' "${NET_LIST[@]}" | jq -R . | jq -sc .)
jq -r --argjson nets "$NETS_JSON" '
  def med: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def fmt: if . == null then "-" elif . >= 100 then (. * 10 | round / 10 | tostring)
	   else (. * 100 | round / 100 | tostring) end;
  .results as $r
  | def row(lab; sel; f):
      [lab] + [ $nets[] as $n | [$r[] | select(.net == $n and (.failed | not)) | select(sel) | f] | med | fmt ]
      + [ ([$r[] | select(.net == "unet" and (.failed | not)) | select(sel) | f] | med) as $u
	  | ("ofi-tcp", "tcp") as $ref
	  | ([$r[] | select(.net == $ref and (.failed | not)) | select(sel) | f] | med) as $t
	  | if $u == null or $t == null or $t == 0 then "-" else ($u / $t | . * 100 | round / 100 | tostring) end ];
  (["figure"] + $nets + ["unet/ofi-tcp", "unet/tcp"]),
  ( [$r[] | select(.prog == "pingpong" and .ranks == 2 and .size != null) | .size] | unique[] as $s
    | row("pingpong p50 us, \($s) B"; .prog == "pingpong" and .ranks == 2 and .size == $s; .p50_us) ),
  ( [$r[] | select(.prog == "pingpong" and .ranks == 2 and .size != null) | .size] | unique[] as $s
    | row("pingpong MB/s, \($s) B"; .prog == "pingpong" and .ranks == 2 and .size == $s; .mbps) ),
  row("ring hop p50 us, 4 ranks"; .prog == "ring" and .hop_p50_us != null; .hop_p50_us),
  ( [$r[] | select(.prog == "alltoall") | .bytes] | unique[] as $b
    | row("alltoall p50 us, \($b) B, 4 ranks"; .prog == "alltoall" and .bytes == $b; .p50_us) ),
  ( [$r[] | select(.prog == "pingpong" and .ranks == 4 and .size != null and .size >= 65536) | .size] | unique[] as $s
    | row("pingpong p50 us, \($s) B, 4 ranks"; .prog == "pingpong" and .ranks == 4 and .size == $s; .p50_us),
      row("pingpong MB/s, \($s) B, 4 ranks"; .prog == "pingpong" and .ranks == 4 and .size == $s; .mbps) ),
  ( [$r[] | select(.prog == "allreduce" and .p50_us != null) | .ranks] | unique[] as $p
    | row("allreduce p50 us, \($p) ranks"; .prog == "allreduce" and .ranks == $p and .p50_us != null; .p50_us) ),
  ( ["mm", "ssort-bulk", "ssort-small", "rsort-bulk", "rsort-small", "cc", "cg"][] as $p
    | row("\($p) ms"; .prog == $p; .secs * 1000) )
  | @tsv' "$OUT/results.json" >"$LOGS/table.tsv" || die "cannot build the table"

# Targets, from the same figures.
TARGETS=$(jq -r '
  def med: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  .results as $r
  | def fig($n; sel; f): [$r[] | select(.net == $n and (.failed | not)) | select(sel) | f] | med;
  (fig("unet"; .prog == "pingpong" and .ranks == 2 and .size == 8; .p50_us)) as $u
  | (fig("ofi-tcp"; .prog == "pingpong" and .ranks == 2 and .size == 8; .p50_us)) as $t
  | (if $u == null or $t == null then "target ping-pong p50 8 B <= 0.6x ofi-tcp: NOT MEASURED"
     else "target ping-pong p50 8 B <= 0.6x ofi-tcp: \($u) us / \($t) us = \($u / $t * 100 | round / 100)x: "
	  + (if $u <= 0.6 * $t then "MET" else "NOT MET" end) end),
  ( ["mm", "ssort-bulk", "ssort-small", "rsort-bulk", "rsort-small", "cc", "cg"][] as $p
    | (fig("unet"; .prog == $p; .secs)) as $u | (fig("ofi-tcp"; .prog == $p; .secs)) as $t
    | (fig("tcp"; .prog == $p; .secs)) as $k
    | if $u == null or $t == null then "target \($p) faster over unet than ofi-tcp: NOT MEASURED"
	   + (if $u == null or $k == null then "" else " (tcp BTL/unet = \($k / $u * 100 | round / 100)x)" end)
      else "target \($p) faster over unet than ofi-tcp: ofi-tcp/unet = \($t / $u * 100 | round / 100)x: "
	   + (if $u < $t then "MET" else "NOT MET" end)
	   + (if $k == null then "" else " (tcp BTL/unet = \($k / $u * 100 | round / 100)x)" end) end )' "$OUT/results.json")

{
	echo "bench-parallel: $(jq -r '.machine.date' "$OUT/results.json"), kernel $(uname -r), $(nproc) CPUs, load average before $LOAD_START"
	echo "hosts: $(jq -r '.machine.hosts' "$OUT/results.json"); pingpong 2 ranks (rows saying \"4 ranks\": 4), allreduce up to 8, ring, alltoall and Split-C programs 4 ranks"
	((QUICK)) && echo "QUICK RUN: small sizes, a form check, not a measurement"
	column -t -s $'\t' "$LOGS/table.tsv"
	echo
	echo "$TARGETS"
	((NFAIL)) && echo "FAILED jobs: $NFAIL (see the lines above; results.json has them as failed)"
} | tee "$OUT/table.txt"

# ---- plots -----------------------------------------------------------------

PLOT_FAIL=0
for net in "${NET_LIST[@]}"; do
	jq -r --arg n "$net" '.results[] | select(.net == $n and .prog == "pingpong" and .ranks == 2 and .size != null)
		| [.size, .p50_us] | @tsv' "$OUT/results.json" >"$LOGS/lat-$net.tsv"
done
PL=""
for net in "${NET_LIST[@]}"; do
	[[ -s $LOGS/lat-$net.tsv ]] && PL+="${PL:+, }\"$LOGS/lat-$net.tsv\" using 1:2 with linespoints title \"$net\""
done
if [[ -n $PL ]]; then
	bench_plot "$OUT/latency.png" "$LOGS/gnuplot.log" <<EOP || PLOT_FAIL=1
set title "MPI ping-pong one-way latency, p50, 2 namespace hosts"
set xlabel "message size, bytes"
set ylabel "us"
set logscale xy
set grid
set key left top
plot $PL
EOP
fi
# Split-C: time relative to ofi-tcp (or, without it, to the first
# transport measured), lower is better, one cluster per program, one bar
# per transport of the run.
REF=${NET_LIST[0]}
for n in "${NET_LIST[@]}"; do
	[[ $n == ofi-tcp ]] && REF=ofi-tcp
done
jq -r --argjson nets "$NETS_JSON" --arg ref "$REF" '
  def med: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  .results as $r
  | ["mm", "ssort-bulk", "ssort-small", "rsort-bulk", "rsort-small", "cc", "cg"][] as $p
  | ([$r[] | select(.net == $ref and .prog == $p and (.failed | not)) | .secs] | med) as $t
  | [$p] + [ $nets[] as $n
	    | ([$r[] | select(.net == $n and .prog == $p and (.failed | not)) | .secs] | med) as $v
	    | if $v == null or $t == null then "?" else ($v / $t) end ]
  | @tsv' "$OUT/results.json" >"$LOGS/splitc.tsv"
PL="" col=2
for n in "${NET_LIST[@]}"; do
	# A transport with no figure at all would make gnuplot fail: left out.
	if awk -F'\t' -v c="$col" '$c != "?" { found = 1 } END { exit !found }' "$LOGS/splitc.tsv"; then
		# The first series names the clusters.
		if [[ -z $PL ]]; then
			PL="\"$LOGS/splitc.tsv\" using $col:xtic(1) title \"$n\""
		else
			PL+=", '' using $col title \"$n\""
		fi
	fi
	col=$((col + 1))
done
if [[ -n $PL ]]; then
	bench_plot "$OUT/splitc.png" "$LOGS/gnuplot.log" <<EOP || PLOT_FAIL=1
set title "Split-C benchmarks on 4 namespace hosts: time relative to $REF (lower is faster)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile separator "\t"
set datafile missing "?"
set ylabel "time / time over $REF"
set grid ytics
set key outside right
set xtics rotate by -30
plot $PL
EOP
else
	# No Split-C figure at all (--pingpong-only): no plot to make.  A
	# failed job is counted in NFAIL already.
	rm -f "$OUT/splitc.png"
	echo "bench-parallel: no Split-C figures, so no splitc.png" >&2
fi
((PLOT_FAIL)) && echo "bench-parallel: gnuplot failed (see $LOGS/gnuplot.log)" >&2
echo "bench-parallel: wrote $OUT/results.json, table.txt, latency.png, splitc.png (${ELAPSED}s)" >&2
((NFAIL == 0 && PLOT_FAIL == 0))
exit $?
}
