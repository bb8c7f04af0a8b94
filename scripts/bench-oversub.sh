#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-oversub.sh [--rounds R] [--out DIR] BUILD_DIR - MPI ranks that
# outnumber the CPUs: the unet provider with its idle wait (fi_cq_read
# sleeps once a busy wait has spun FI_UNET_SPIN_US with nothing
# arriving), the same provider spinning for ever (FI_UNET_SPIN_US=-1,
# the behaviour before the idle wait), and Open MPI's tcp BTL, in the
# same run, interleaved round by round so that load from elsewhere hits
# all three alike (docs/parallel.md, "Ranks that outnumber the cores").
#
# Per round and variant: mpi_ring on 4 ranks (ring hop p50, MPI_Alltoall
# of 64 KiB p50), mpi_pingpong on 4 ranks (2 idle in a barrier; p50 and
# MB/s at 64 KiB and 1 MiB), mpi_allreduce on 8 ranks (p50 at 8 ranks),
# cg on 4 ranks (wall time).  Prints each figure's median over the
# rounds per variant and its ratio to the tcp BTL; writes DIR/results.json
# (every RESULT line with "variant" and "round").  Needs root.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
HOSTS_SH="$HERE/hosts.sh"
ROUNDS=3 OUT="$ROOT/bench-results/oversub" BUILD=""
while (($#)); do
	case $1 in
	--rounds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "bench-oversub: --rounds N" >&2; exit 2; }; ROUNDS=$2; shift 2 ;;
	--out) [[ -n ${2:-} ]] || exit 2; OUT=$2; shift 2 ;;
	-*) echo "usage: $0 [--rounds R] [--out DIR] BUILD_DIR" >&2; exit 2 ;;
	*) BUILD=$1; shift ;;
	esac
done
[[ -n $BUILD ]] || { echo "usage: $0 [--rounds R] [--out DIR] BUILD_DIR" >&2; exit 2; }
[[ $BUILD = /* ]] || BUILD="$PWD/$BUILD"
[[ $(id -u) -eq 0 ]] || { echo "bench-oversub: needs root" >&2; exit 1; }
[[ -x $BUILD/parallel/mpi_ring && -f $BUILD/libunet-fi.so ]] || { echo "bench-oversub: run make first" >&2; exit 1; }
mkdir -p "$OUT" || exit 1
LOGS=$(mktemp -d /tmp/unet-bench-oversub.XXXXXX) || exit 1
NAME="bo$$"
trap '"$HOSTS_SH" down "$NAME"; rm -rf "$LOGS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$HOSTS_SH" up 8 --name "$NAME" --build "$BUILD" --mode skb >"$LOGS/up.log" 2>&1 ||
	{ cat "$LOGS/up.log" >&2; exit 1; }
echo "bench-oversub: $(date -u +%FT%TZ), $(nproc) CPUs, load average before $(cut -d' ' -f1 /proc/loadavg), $ROUNDS rounds" >&2
P=$BUILD/parallel
NFAIL=0

# run VARIANT ROUND NP PROG ARGS...
run() {
	local v=$1 r=$2 np=$3 net=unet log
	local -a env=()
	shift 3
	case $v in
	tcp) net=tcp ;;
	spin) env=(-x FI_UNET_SPIN_US=-1) ;;
	esac
	log="$LOGS/$v-$r-$1.log"
	if "$HOSTS_SH" mpirun "$NAME" --net "$net" --np "$np" --timeout 300 "${env[@]}" -- "$P/$@" >"$log" 2>&1 &&
		grep -q '^RESULT .*"ok":true' "$log"; then
		sed -n 's/^RESULT //p' "$log" | jq -c --arg v "$v" --argjson r "$r" '. + {variant: $v, round: $r}' >>"$LOGS/all.jsonl"
	else
		echo "bench-oversub: $v round $r $1 FAILED" >&2
		NFAIL=$((NFAIL + 1))
	fi
}

: >"$LOGS/all.jsonl"
for ((r = 1; r <= ROUNDS; r++)); do
	for v in tcp spin sleep; do
		echo "bench-oversub: round $r $v" >&2
		run "$v" "$r" 4 mpi_ring --rounds 3000 --warmup 200 --a2a-bytes 65536 --a2a-iters 40
		run "$v" "$r" 4 mpi_pingpong --iters 300 --warmup 20 --maxsize 1048576
		run "$v" "$r" 8 mpi_allreduce --iters 1000
		run "$v" "$r" 4 cg --grid 256
	done
done
jq -s . "$LOGS/all.jsonl" >"$OUT/results.json"
jq -r '
  def med: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def fmt: if . == null then "-" elif . >= 100 then (. * 10 | round / 10 | tostring)
	   else (. * 100 | round / 100 | tostring) end;
  . as $r
  | def fig($v; sel; f): [$r[] | select(.variant == $v) | select(sel) | f] | med;
  def row(lab; sel; f):
    [fig("tcp"; sel; f), fig("spin"; sel; f), fig("sleep"; sel; f)] as $m
    | [lab] + ($m | map(fmt))
      + [ ($m[1], $m[2]) as $u | if $u == null or $m[0] == null or $m[0] == 0 then "-"
				 else ($u / $m[0] * 100 | round / 100 | tostring) end ];
  ["figure", "tcp", "unet-spin", "unet", "unet-spin/tcp", "unet/tcp"],
  row("ring hop p50 us"; .prog == "ring" and .hop_p50_us != null; .hop_p50_us),
  row("alltoall 64 KiB p50 us"; .prog == "alltoall"; .p50_us),
  row("pingpong p50 us 8 B"; .prog == "pingpong" and .size == 8; .p50_us),
  ( (65536, 1048576) as $s
    | row("pingpong p50 us \($s) B"; .prog == "pingpong" and .size == $s; .p50_us),
      row("pingpong MB/s \($s) B"; .prog == "pingpong" and .size == $s; .mbps) ),
  row("allreduce p50 us 8 ranks"; .prog == "allreduce" and .ranks == 8 and .p50_us != null; .p50_us),
  row("cg ms"; .prog == "cg" and .secs != null; .secs * 1000)
  | @tsv' "$OUT/results.json" | column -t -s $'\t' | tee "$OUT/table.txt"
echo "bench-oversub: load average after $(cut -d' ' -f1 /proc/loadavg); $NFAIL failed jobs" | tee -a "$OUT/table.txt"
((NFAIL == 0))
