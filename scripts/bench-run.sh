#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-run.sh [--reps N] [--quick] [--xdp-mode skb|native] [--json FILE]
#              [--only sockperf,logp,redis,nginx] [--perf DIR] BUILD_DIR
#
# Unmodified Debian programs under unet-run against the same programs on
# the kernel's sockets, in one run, interleaved (kernel, U-Net, kernel,
# U-Net, ...), between two namespaces over veth:
#
#   sockperf ping-pong, 64 B, UDP and TCP, spinning (--nonblocked: both
#     sides poll their socket) and blocking (the kernel sleeps in
#     recvfrom; unet-run's adaptive wait spins --spin-us, then sleeps):
#     both ends under unet-run against both ends on the kernel; p50 and
#     p99 of the round trip (--full-rtt).
#   redis-benchmark SET and GET, 50 clients, against redis-server under
#     unet-run and on the kernel (the clients are the kernel's: one
#     redis-benchmark process, in the other namespace).
#   nginx (one process, master_process off) serving a 1 KiB file to wrk
#     (one thread, 16 connections, the kernel's TCP): requests/s.
#   redis and nginx again under unet-run --batch-sends (the answers to one
#     epoll_wait's sockets leave in one kick), against the same kernel runs.
#   The interception itself: sockperf UDP ping-pong over loopback, which
#     unet-run passes through to libc, with and without the preload.
#   LogP of UDP, 64 B, spinning (unet-bench logp with the kernel's socket
#     API, under unet-run or not): the round trip split into the send
#     call (o_s) and the receive call that finds the message (o_r).
#
# Each repetition measures every row both ways; the table gives the
# median of the per-repetition ratios (U-Net / kernel: below 1 is faster
# for times, above 1 for rates), their range, and the medians.  The XDP
# program is attached for the U-Net runs and detached for the kernel's,
# so the kernel's path pays nothing for it; for redis and nginx, whose
# clients are the kernel's in both runs, it is on the servers' end only.
# Server on CPU 1, client on CPU 0.  A program that is not installed
# gives a row that says so.  Measure on a quiet machine: anything else
# on the 2 CPUs moves these figures by tens of percent.  Needs root.
#
#   --reps N      repetitions (default 3; --quick: 1)
#   --quick       short runs (1 s, fewer requests): a form check
#   --xdp-mode M  how the program is attached (default skb: veth's copy
#                 mode either way, see docs/platform.md)
#   --json FILE   also write the rows as JSON
#   --only LIST   only these groups of rows (comma-separated: sockperf,
#                 logp, redis, nginx)
#   --perf DIR    record the servers (sockperf, redis-server, nginx) with
#                 `perf record --call-graph dwarf` into DIR/NAME-WHICH-REP.data
#                 (it slows them: the rates of such a run are not figures)
#
# For redis and nginx the table also gives the CPU time per request of
# the server (user + system, from /proc, over the client's run) and of
# server and client together (the client's from perf stat's task-clock):
# on a loaded machine these move less than the rates.  The total matters
# because the kernel's TCP receive work runs in softirq on the sender's
# CPU, so much of the kernel server's TCP is charged to the client.
# unet-run's server spins up to --spin-us before each sleep, which this
# counts.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=scripts/stage.sh
source "$ROOT/scripts/stage.sh"

REPS="" QUICK=0 MODE=skb JSON="" ONLY=sockperf,logp,redis,nginx PERF=""
usage() { echo "usage: $0 [--reps N] [--quick] [--xdp-mode skb|native] [--json FILE] [--only LIST] [--perf DIR] BUILD_DIR"; }
while (($#)); do
	case $1 in
	--reps) REPS=${2:-}; shift 2 ;;
	--quick) QUICK=1; shift ;;
	--xdp-mode) MODE=${2:-}; shift 2 ;;
	--json) JSON=${2:-}; shift 2 ;;
	--only) ONLY=${2:-}; shift 2 ;;
	--perf) PERF=${2:-}; shift 2 ;;
	-h | --help) sed -n '3,48p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
done
(($# == 1)) || { usage >&2; exit 2; }
[[ -z $REPS ]] && { ((QUICK)) && REPS=1 || REPS=3; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "$0: --reps takes a positive count" >&2; exit 2; }
[[ $MODE == skb || $MODE == native ]] || { echo "$0: --xdp-mode takes skb or native" >&2; exit 2; }
[[ ,$ONLY, =~ ^(,(sockperf|logp|redis|nginx))+,$ ]] ||
	{ echo "$0: --only takes a comma-separated list of sockperf, logp, redis, nginx" >&2; exit 2; }
if [[ -n $PERF ]]; then
	command -v perf >/dev/null || { echo "$0: --perf needs perf" >&2; exit 2; }
	mkdir -p "$PERF" && PERF=$(cd "$PERF" && pwd) || exit 2
fi
(($(nproc) >= 2)) || { echo "$0: needs 2 CPUs (server on CPU 1, client on CPU 0)" >&2; exit 2; }
[[ -x $1/unet-run && -f $1/libunet-preload.so && -x $1/unetctl ]] ||
	{ echo "$0: $1: no unet-run, libunet-preload.so or unetctl there (make all first)" >&2; exit 2; }
for c in jq python3; do command -v "$c" >/dev/null || { echo "$0: needs $c" >&2; exit 2; }; done
umask 022

if ((QUICK)); then
	SP_SECS=1 REDIS_N=20000 WRK_SECS=1
else
	SP_SECS=${BENCH_SP_SECS:-3} REDIS_N=${BENCH_REDIS_N:-200000} WRK_SECS=${BENCH_WRK_SECS:-3}
fi
SRV_CPU=1 CLI_CPU=0
SP_PORT=11311 REDIS_PORT=16379 HTTP_PORT=18080 LOGP_PORT=11312
BENCH=$(cd "$1" && pwd)/unet-bench
LOGP_COUNT=100000
((QUICK)) && LOGP_COUNT=20000

LOGS=$(mktemp -d /tmp/unet-bench-run.XXXXXX) || exit 1
WWW=$(mktemp -d /tmp/unet-bench-www.XXXXXX) || exit 1
chmod 755 "$WWW"
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	unet_netns_cleanup
	unet_stage_remove
	rm -rf "$WWW"
	if [[ ${BENCH_KEEP_LOGS:-0} == 1 ]]; then
		echo "bench-run: logs kept in $LOGS" >&2
	else
		rm -rf "$LOGS"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

unet_stage "$1" || exit 1
RUN=$UNET_STAGE/unet-run
CTL=$UNET_STAGE/unetctl
unet_netns_setup "urun$$" || exit 1
echo "bench-run: $NS_A/$IF_A ($IP_A, servers) <-> $NS_B/$IF_B ($IP_B, clients), XDP $MODE mode, $REPS repetitions" >&2

# attached on|off|servers: the program on both ends (the sockperf rows:
# both ends under unet-run), on neither (the kernel's runs), or on the
# servers' end only (redis and nginx: their clients are the kernel's in
# both runs, so the clients' end carries no program in either; with one
# there, every frame to the client would pay generic XDP's copy, in the
# softirq the server's send runs).
attached() {
	local s
	for s in a b; do
		if [[ $1 == on || ($1 == servers && $s == a) ]]; then
			in_$s "$CTL" attach "$(eval echo "\$IF_${s^^}")" --mode "$MODE" >/dev/null ||
				{ echo "$0: unetctl attach failed" >&2; exit 1; }
		else
			in_$s "$CTL" detach "$(eval echo "\$IF_${s^^}")" >/dev/null 2>&1
		fi
	done
}

# wrap SIDE WHICH [NAME]: the command prefix that runs a program in SIDE's
# namespace, under unet-run (WHICH=unet) or not (kernel); with NAME and
# --perf, under perf record.
wrap() {
	local ns=$NS_A
	[[ $1 == b ]] && ns=$NS_B
	WRAP=(ip netns exec "$ns")
	if [[ -n ${3:-} && -n $PERF ]]; then
		WRAP+=(perf record -q "--call-graph=dwarf,16384" -F 2000 -o "$PERF/$3-$2-$REP.data" --)
	fi
	if [[ $2 == unet || $2 == batch ]]; then
		local ifn=$IF_A
		[[ $1 == b ]] && ifn=$IF_B
		WRAP+=(env "UNET_PIN_ROOT=$UNET_PIN_ROOT" "$RUN" --iface "$ifn")
		[[ $2 == batch ]] && WRAP+=(--batch-sends)
	fi
}

# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 20; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
port_bound() { [[ -n $(in_a ss "$1" "sport = :$2") ]]; }
# cpu_ticks PID: the user + system clock ticks of PID and its children
# (perf's child when --perf wraps the server), summed over its threads.
cpu_ticks() {
	local p t=0 f
	for p in "$1" $(pgrep -P "$1"); do
		f=$(cut -d')' -f2- "/proc/$p/stat" 2>/dev/null) || continue
		# After "pid (comm)": state is field 1, utime 12, stime 13.
		t=$((t + $(echo "$f" | awk '{print $12 + $13}')))
	done
	echo "$t"
}
# stop_srv PID SIG: end a server; under --perf, its child (the server)
# first, so that perf writes its file and exits.
stop_srv() {
	local c
	if [[ -n $PERF ]]; then
		for c in $(pgrep -P "$1"); do kill "-$2" "$c" 2>/dev/null; done
	fi
	kill "-$2" "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# client_ms FILE: the task-clock (ms) perf stat wrote to FILE.
client_ms() { awk -F, '$3 == "task-clock" { printf "%.0f", $1 }' "$1" 2>/dev/null; }
# CLIENT: the prefix that counts a client's CPU into $LOGS/client.cpu.
CLIENT=(perf stat "-x," -e task-clock -o "$LOGS/client.cpu" --)
# cpu_us_per TICKS REQUESTS: microseconds of CPU per request.
# cpu_total_per TICKS CLIENT_MS REQUESTS: server and client together.
cpu_total_per() { awk -v t="$1" -v c="${2:-0}" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (n > 0 ? (t * 1e6 / hz + c * 1e3) / n : 0) }'; }
cpu_us_per() { awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (n > 0 ? t * 1e6 / hz / n : 0) }'; }
# A U-Net socket holds its port with a kernel socket (docs/unet-run.md),
# so ss sees the server's port either way.

# rows: one line per measurement: NAME WHICH REP VALUE...
ROWS=$LOGS/rows

# sp_pingpong NAME WHICH PROTO WAIT [loopback]: a sockperf ping-pong;
# appends "NAME WHICH REP p50 p99" (us).
sp_pingpong() {
	local name=$1 which=$2 proto=$3 wait=$4 lo=${5:-} ip=$IP_A args=() srv pid out p50 p99
	args=(-m 64)
	[[ $proto == tcp ]] && args+=(--tcp)
	[[ $wait == spin ]] && args+=(--nonblocked)
	local cside=b
	if [[ -n $lo ]]; then
		ip=127.0.0.1
		cside=a
	fi
	wrap a "$which" "$name"
	"${WRAP[@]}" taskset -c "$SRV_CPU" sockperf sr -i "$ip" -p "$SP_PORT" "${args[@]}" \
		>"$LOGS/$name-$which-$REP.srv" 2>&1 &
	srv=$!
	local opt=-Hlun
	[[ $proto == tcp ]] && opt=-Hltn
	wait_for 15 port_bound "$opt" "$SP_PORT" || { echo "bench-run: $name: sockperf server did not start" >&2; }
	wrap "$cside" "$which"
	out=$LOGS/$name-$which-$REP.cli
	timeout 60 "${WRAP[@]}" taskset -c "$CLI_CPU" sockperf pp -i "$ip" -p "$SP_PORT" "${args[@]}" \
		-t "$SP_SECS" --full-rtt >"$out" 2>&1
	kill -INT "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	p50=$(sed -n 's/.*percentile 50\.000 = *\([0-9.]*\).*/\1/p' "$out" | tail -1)
	p99=$(sed -n 's/.*percentile 99\.000 = *\([0-9.]*\).*/\1/p' "$out" | tail -1)
	if grep -q "dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0" "$out" &&
		[[ -n $p50 && -n $p99 ]]; then
		echo "$name $which $REP $p50 $p99" >>"$ROWS"
	else
		echo "bench-run: $name $which: no clean sockperf result (see $out)" >&2
	fi
}

# logp_udp WHICH: unet-bench's LogP of kernel-API UDP (64 B, spinning,
# non-blocking calls) against its spinning echo, both under unet-run for
# WHICH=unet: the round trip split into the send call (o_s) and the
# receive call that finds the message (o_r).  On veth the send call runs
# the receiving side's whole stack in its softirq, for the kernel's UDP
# and for an AF_XDP send alike, so o_s is where the two paths meet and
# o_r where they differ.  Appends "logp-rtt|logp-os|logp-or WHICH REP us".
logp_udp() {
	local which=$1 srv out rtt os or
	wrap a "$which"
	"${WRAP[@]}" "$BENCH" echo --transport udp --local "$IP_A:$LOGP_PORT" --remote "$IP_B:$LOGP_PORT" \
		--mode spin --cpu "$SRV_CPU" --timeout 60 >"$LOGS/logp-$which-$REP.srv" 2>&1 &
	srv=$!
	wait_for 15 port_bound -Huan "$LOGP_PORT" || echo "bench-run: logp: echo did not start" >&2
	wrap b "$which"
	out=$LOGS/logp-$which-$REP.cli
	timeout 60 "${WRAP[@]}" "$BENCH" logp --transport udp --local "$IP_B:$LOGP_PORT" --remote "$IP_A:$LOGP_PORT" \
		--mode spin --cpu "$CLI_CPU" --size 64 --count "$LOGP_COUNT" --timeout 50 >"$out" 2>&1
	kill -TERM "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	read -r rtt os or < <(jq -r '[.rtt_us, .os_us, .or_us] | @tsv' < <(grep '^{' "$out") 2>/dev/null)
	if [[ -n $rtt && -n $os && -n $or && $rtt != null ]]; then
		echo "logp-rtt $which $REP $rtt" >>"$ROWS"
		echo "logp-os $which $REP $os" >>"$ROWS"
		echo "logp-or $which $REP $or" >>"$ROWS"
	else
		echo "bench-run: logp $which: no result (see $out)" >&2
	fi
}

# redis WHICH: redis-benchmark SET and GET against a server; appends
# "redis-set WHICH REP rps" and "redis-get ...".
redis() {
	local which=$1 srv out c0 c1
	wrap a "$which" redis
	"${WRAP[@]}" taskset -c "$SRV_CPU" redis-server --bind "$IP_A" --port "$REDIS_PORT" --save "" \
		--appendonly no --protected-mode no --daemonize no --dir "$LOGS" \
		>"$LOGS/redis-$which-$REP.srv" 2>&1 &
	srv=$!
	wait_for 15 port_bound -Hltn "$REDIS_PORT" || echo "bench-run: redis-server did not start" >&2
	out=$LOGS/redis-$which-$REP.csv
	c0=$(cpu_ticks "$srv")
	timeout 120 "${CLIENT[@]}" ip netns exec "$NS_B" taskset -c "$CLI_CPU" redis-benchmark -h "$IP_A" -p "$REDIS_PORT" \
		-c 50 -n "$REDIS_N" -t set,get --csv >"$out" 2>"$LOGS/redis-$which-$REP.err"
	c1=$(cpu_ticks "$srv")
	stop_srv "$srv" TERM
	# "SET","12345.67",...
	local t v
	for t in SET GET; do
		v=$(sed -n "s/^\"$t\",\"\\([0-9.]*\\)\".*/\\1/p" "$out")
		if [[ -n $v ]]; then
			# The CPU is over SET and GET together: the same for both rows.
			echo "redis-${t,,} $which $REP $v $(cpu_us_per $((c1 - c0)) $((2 * REDIS_N))) $(cpu_total_per $((c1 - c0)) "$(client_ms "$LOGS/client.cpu")" $((2 * REDIS_N)))" >>"$ROWS"
		else
			echo "bench-run: redis $t $which: no result (see $out)" >&2
		fi
	done
}

# nginx_wrk WHICH: wrk against nginx serving a 1 KiB file; appends
# "nginx WHICH REP rps" when wrk saw no error.
nginx_wrk() {
	local which=$1 srv out conf=$LOGS/nginx-$which-$REP c0 c1
	mkdir -p "$conf"
	cat >"$conf/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $conf/error.log;
pid $conf/nginx.pid;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $conf;
	proxy_temp_path $conf;
	fastcgi_temp_path $conf;
	uwsgi_temp_path $conf;
	scgi_temp_path $conf;
	server {
		listen $IP_A:$HTTP_PORT;
		root $WWW;
	}
}
EOF
	wrap a "$which" nginx
	"${WRAP[@]}" taskset -c "$SRV_CPU" nginx -c "$conf/nginx.conf" -e "$conf/error.log" \
		>"$conf/out" 2>&1 &
	srv=$!
	wait_for 15 port_bound -Hltn "$HTTP_PORT" || echo "bench-run: nginx did not start" >&2
	out=$conf/wrk.out
	c0=$(cpu_ticks "$srv")
	timeout 60 "${CLIENT[@]}" ip netns exec "$NS_B" taskset -c "$CLI_CPU" wrk -t 1 -c 16 -d "${WRK_SECS}s" \
		"http://$IP_A:$HTTP_PORT/small.html" >"$out" 2>&1
	c1=$(cpu_ticks "$srv")
	stop_srv "$srv" TERM
	local rps reqs
	rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$out")
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$out")
	if [[ -n $rps && -n $reqs ]] && ! grep -q "Non-2xx\|Socket errors" "$out"; then
		echo "nginx $which $REP $rps $(cpu_us_per $((c1 - c0)) "$reqs") $(cpu_total_per $((c1 - c0)) "$(client_ms "$LOGS/client.cpu")" "$reqs")" >>"$ROWS"
	else
		echo "bench-run: nginx $which: no clean wrk result (see $out)" >&2
	fi
}

head -c 1024 /dev/urandom | base64 -w 64 | head -c 1024 >"$WWW/small.html"
chmod 644 "$WWW/small.html"
HAVE_SOCKPERF=0 HAVE_REDIS=0 HAVE_NGINX=0
WANT_SOCKPERF=0 WANT_REDIS=0 WANT_NGINX=0
[[ ,$ONLY, == *,sockperf,* ]] && WANT_SOCKPERF=1
[[ ,$ONLY, == *,redis,* ]] && WANT_REDIS=1
[[ ,$ONLY, == *,nginx,* ]] && WANT_NGINX=1
command -v sockperf >/dev/null && HAVE_SOCKPERF=1
WANT_LOGP=0
[[ ,$ONLY, == *,logp,* && -x $BENCH ]] && WANT_LOGP=1
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null && HAVE_REDIS=1
command -v nginx >/dev/null && command -v wrk >/dev/null && HAVE_NGINX=1

for ((REP = 1; REP <= REPS; REP++)); do
	for which in kernel unet batch; do
		# batch: unet-run --batch-sends, for the servers of many
		# connections (redis, nginx) only.
		[[ $which == batch ]] && ! ((WANT_REDIS || WANT_NGINX)) && continue
		if [[ $which != kernel ]]; then attached on; else attached off; fi
		echo "bench-run: repetition $REP/$REPS, $which" >&2
		if [[ $which != batch ]] && ((HAVE_SOCKPERF && WANT_SOCKPERF)); then
			sp_pingpong udp-spin "$which" udp spin
			sp_pingpong udp-block "$which" udp block
			sp_pingpong tcp-spin "$which" tcp spin
			sp_pingpong tcp-block "$which" tcp block
			# Passed through (loopback): the "unet" run is the preload
			# with nothing to accelerate.
			sp_pingpong passthrough "$which" udp block lo
		fi
		[[ $which != batch ]] && ((WANT_LOGP)) && logp_udp "$which"
		[[ $which != kernel ]] && ((WANT_REDIS || WANT_NGINX)) && attached servers
		((HAVE_REDIS && WANT_REDIS)) && redis "$which"
		((HAVE_NGINX && WANT_NGINX)) && nginx_wrk "$which"
	done
done
attached off

python3 - "$ROWS" "$JSON" "$HAVE_SOCKPERF" "$HAVE_REDIS" "$HAVE_NGINX" "$REPS" "$ONLY" <<'PY'
import json, statistics, sys
rows_path, json_path = sys.argv[1], sys.argv[2]
have = {"logp": True, "sockperf": sys.argv[3] == "1", "redis": sys.argv[4] == "1", "nginx": sys.argv[5] == "1"}
reps = int(sys.argv[6])
only = sys.argv[7].split(",")
data = {}
try:
    for line in open(rows_path):
        f = line.split()
        data.setdefault(f[0], {}).setdefault(f[1], {})[int(f[2])] = [float(x) for x in f[3:]]
except OSError:
    pass
# name, what, needs, unit, kind (time: lower is better; rate), target
ROWS = [
    ("udp-spin", "sockperf UDP 64 B round trip, spinning", "sockperf", "us", "time", 0.6),
    ("udp-block", "sockperf UDP 64 B round trip, blocking", "sockperf", "us", "time", None),
    ("tcp-spin", "sockperf TCP 64 B round trip, spinning", "sockperf", "us", "time", 0.7),
    ("tcp-block", "sockperf TCP 64 B round trip, blocking", "sockperf", "us", "time", None),
    ("redis-set", "redis-benchmark SET, 50 clients", "redis", "req/s", "rate", 1.3),
    ("redis-get", "redis-benchmark GET, 50 clients", "redis", "req/s", "rate", 1.3),
    ("nginx", "nginx 1 KiB file, wrk 16 connections", "nginx", "req/s", "rate", 1.2),
    ("passthrough", "sockperf UDP over loopback (passed to libc)", "sockperf", "us", "time", 1.02),
    ("logp-rtt", "LogP, UDP 64 B, spinning: round trip", "logp", "us1", "time", None),
    ("logp-os", "  o_s: the send call", "logp", "us1", "time", None),
    ("logp-or", "  o_r: the receive call that finds it", "logp", "us1", "time", None),
]
out = []
print("%-52s %10s %10s %8s %-15s %s" % ("", "kernel", "unet-run", "ratio", "[range]", "target"))
# The servers of many connections again under unet-run --batch-sends:
# each such row, then its batched twin against the same kernel runs.
rows = []
for r in ROWS:
    rows.append(r + ("unet",))
    if r[2] in ("redis", "nginx"):
        rows.append((r[0], "  with --batch-sends", r[2], r[3], r[4], r[5], "batch"))
for name, what, needs, unit, kind, target, which in rows:
    if needs not in only:
        continue
    rec = {"name": name + ("" if which == "unet" else "-" + which), "what": what, "unit": unit, "target": target}
    if not have[needs]:
        rec["status"] = "not installed: " + needs
        print("%-52s %s" % (what, rec["status"]))
        out.append(rec)
        continue
    k, u = data.get(name, {}).get("kernel", {}), data.get(name, {}).get(which, {})
    paired = sorted(r for r in k if r in u)
    if not paired:
        rec["status"] = "failed (no paired run; see the log lines above)"
        print("%-52s %s" % (what, rec["status"]))
        out.append(rec)
        continue
    ratios = [u[r][0] / k[r][0] for r in paired]
    rec.update(status="ok", runs=len(paired), kernel=statistics.median(k[r][0] for r in paired),
               unet=statistics.median(u[r][0] for r in paired), ratio=round(statistics.median(ratios), 3),
               ratio_min=round(min(ratios), 3), ratio_max=round(max(ratios), 3))
    if unit == "us":
        rec["kernel_p99"] = statistics.median(k[r][1] for r in paired)
        rec["unet_p99"] = statistics.median(u[r][1] for r in paired)
        rec["ratio_p99"] = round(statistics.median(u[r][1] / k[r][1] for r in paired), 3)
    verdict = ""
    if target is not None:
        met = rec["ratio"] <= target if kind == "time" else rec["ratio"] >= target
        rec["target_met"] = met
        verdict = "%s %.2fx %s" % ("<=" if kind == "time" else ">=", target, "met" if met else "NOT met")
    fmt = "%10.2f %10.2f" if unit in ("us", "us1") else "%10.0f %10.0f"
    print(("%-52s " + fmt + " %7.2fx [%.2f-%.2f]     %s") % (what + {"us": " (us, p50)", "us1": " (us)"}.get(unit, " (req/s)"),
          rec["kernel"], rec["unet"], rec["ratio"], rec["ratio_min"], rec["ratio_max"], verdict))
    if unit == "us":
        print("%-52s %10.2f %10.2f %7.2fx" % ("  p99", rec["kernel_p99"], rec["unet_p99"], rec["ratio_p99"]))
    elif all(len(k[r]) > 1 and len(u[r]) > 1 for r in paired):
        rec["kernel_cpu_us"] = statistics.median(k[r][1] for r in paired)
        rec["unet_cpu_us"] = statistics.median(u[r][1] for r in paired)
        rec["ratio_cpu"] = round(statistics.median(u[r][1] / k[r][1] for r in paired if k[r][1] > 0), 3) \
            if any(k[r][1] > 0 for r in paired) else None
        print("%-52s %10.2f %10.2f %7sx" % ("  server CPU us/request", rec["kernel_cpu_us"], rec["unet_cpu_us"],
              "%.2f" % rec["ratio_cpu"] if rec["ratio_cpu"] is not None else "-"))
        if all(len(k[r]) > 2 and len(u[r]) > 2 for r in paired):
            rec["kernel_total_cpu_us"] = statistics.median(k[r][2] for r in paired)
            rec["unet_total_cpu_us"] = statistics.median(u[r][2] for r in paired)
            rec["ratio_total_cpu"] = round(statistics.median(u[r][2] / k[r][2] for r in paired if k[r][2] > 0), 3)
            print("%-52s %10.2f %10.2f %7.2fx" % ("  server + client CPU us/request", rec["kernel_total_cpu_us"],
                  rec["unet_total_cpu_us"], rec["ratio_total_cpu"]))
    out.append(rec)
print("(%d repetition%s; ratio = unet-run / kernel, the median of the repetitions' ratios)"
      % (reps, "" if reps == 1 else "s"))
if json_path:
    with open(json_path, "w") as f:
        json.dump({"reps": reps, "rows": out}, f, indent=1)
if not any(r.get("status") == "ok" for r in out):
    sys.exit(1)
PY
