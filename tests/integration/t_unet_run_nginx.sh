# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_nginx.sh - Debian's nginx, unmodified, serving files over
# U-Net under unet-run (docs/unet-run.md) to curl and wrk on the kernel's
# TCP in the other namespace.  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_nginx|-|120|Debian's nginx, unmodified, under unet-run (native mode; its master process and 2 worker processes, sendfile on): the master opens the listener on U-Net, each worker accepts on its copy (the master's relay hands it connections) and both workers serve requests (nginx's own access log names them), and after a reload (SIGHUP: the old workers exit, 2 new ones accept) both new ones serve; a 600 kB file fetched by curl from the other namespace byte for byte, 12 files of 0 bytes to 3 MB (around one segment, 64 KiB and nginx's sendfile steps) on one kept-alive connection, each one's SHA-256 checked, then wrk (1 s, 2 connections): every response 200, no socket error, every connection on U-Net (the namespace's kernel TCP counters unmoved); skipped without nginx or wrk"
)

t_unet_run_nginx() {
	command -v nginx >/dev/null || skip "nginx is not installed"
	command -v wrk >/dev/null || skip "wrk is not installed"
	local pid before after n i sizes workers n_handed n_accepted
	T_MODE=${T_MODE:-native}
	tcp_run_setup
	mkdir -p "$T_DIR/www" "$T_DIR/tmp"
	head -c 614400 /dev/urandom >"$T_DIR/www/blob"
	# Files of sizes around nginx's and the layer's boundaries: empty, one
	# byte, one segment and around it, nginx's sendfile steps, 3 MB.
	sizes=(0 1 1459 1460 1461 4096 65535 65536 65537 262144 1048575 3000000)
	for i in "${sizes[@]}"; do
		head -c "$i" /dev/urandom >"$T_DIR/www/f$i"
	done
	echo "small page" >"$T_DIR/www/index.html"
	# nginx as it is usually run: the master opens the listener, its
	# worker processes (fork children) accept on their copies of it
	# (docs/unet-run.md, "Descriptors").  user root: the workers write
	# the unet-run log the master made.
	cat >"$T_DIR/nginx.conf" <<CONF
master_process on;
worker_processes 2;
user root;
daemon off;
pid $T_DIR/nginx.pid;
error_log $T_DIR/error.log info;
events { worker_connections 64; }
http {
	log_format workers '\$pid \$status';
	access_log $T_DIR/access.log workers;
	sendfile on;
	client_body_temp_path $T_DIR/tmp/body;
	proxy_temp_path $T_DIR/tmp/proxy;
	fastcgi_temp_path $T_DIR/tmp/fastcgi;
	uwsgi_temp_path $T_DIR/tmp/uwsgi;
	scgi_temp_path $T_DIR/tmp/scgi;
	server {
		listen $IP_A:7950;
		root $T_DIR/www;
	}
}
CONF
	before=$(kernel_tcp_segs a)
	unet_bg_a "${RUN_ENV[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/nginx.log" \
		nginx -p "$T_DIR" -c "$T_DIR/nginx.conf" >"$T_DIR/nginx.out" 2>&1
	pid=$UNET_BG_PID
	# Both workers have said they accept before the first connection, so
	# the master's relay hands connections to each in turn.
	for ((i = 0; i < 100; i++)); do
		(($(grep -c "this process accepts" "$T_DIR/nginx.log" 2>/dev/null) >= 2)) && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	for ((i = 0; i < 100; i++)); do
		[[ $(in_b curl -s "http://$IP_A:7950/" 2>/dev/null) == "small page" ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if ((i == 100)) || ! kill -0 "$pid" 2>/dev/null; then
		cat "$T_DIR/nginx.out" "$T_DIR/error.log" "$T_DIR/nginx.log"
		fail "nginx under unet-run does not answer"
	fi
	in_b curl -sf -o "$T_DIR/got" "http://$IP_A:7950/blob" || fail "curl of the 600 kB file failed"
	cmp "$T_DIR/www/blob" "$T_DIR/got" || fail "the file curl got differs from the one nginx served"
	# All the sizes on one kept-alive connection, each file's digest checked.
	(cd "$T_DIR/www" && sha256sum "${sizes[@]/#/f}") >"$T_DIR/want.sha"
	mkdir -p "$T_DIR/got.d"
	in_b curl -sf --parallel-max 1 $(for i in "${sizes[@]}"; do
		printf -- '-o %s http://%s:7950/f%s ' "$T_DIR/got.d/f$i" "$IP_A" "$i"
	done) || fail "curl of the files of many sizes failed"
	(cd "$T_DIR/got.d" && sha256sum -c --quiet "$T_DIR/want.sha") ||
		fail "a file of the many sizes differs from the one nginx served"
	in_b wrk -t1 -c2 -d1s "http://$IP_A:7950/blob" >"$T_DIR/wrk.out" 2>&1 || { cat "$T_DIR/wrk.out"; fail "wrk failed"; }
	cat "$T_DIR/wrk.out"
	grep -qE "Socket errors|Non-2xx" "$T_DIR/wrk.out" && fail "wrk reports errors"
	n=$(sed -n 's/^ *\([0-9][0-9]*\) requests in .*/\1/p' "$T_DIR/wrk.out")
	# More than one request per connection: nginx waits for the next
	# request of a kept-alive connection on an edge-triggered epoll.
	[[ $n =~ ^[0-9]+$ ]] || fail "wrk printed no request count"
	((n > 2)) || fail "wrk got $n answers on its 2 kept-alive connections"
	# A reload (SIGHUP): the master keeps its listener, forks 2 new
	# workers, and the old ones finish and exit; the new ones serve.
	kill -HUP "$pid"
	for ((i = 0; i < 100; i++)); do
		(($(grep -c "this process accepts" "$T_DIR/nginx.log") >= 4)) && break
		sleep 0.1
	done
	((i < 100)) || fail "no 2 new workers accept after a reload"
	for i in 1 2 3 4; do
		[[ $(in_b curl -s "http://$IP_A:7950/") == "small page" ]] || fail "no answer after the reload"
	done
	kill -TERM "$pid"; unet_bg_wait "$pid" 10
	cat "$T_DIR/nginx.log"
	grep -q "tcp listen $IP_A:7950: U-Net" "$T_DIR/nginx.log" || fail "nginx's listener was not on U-Net"
	# A worker that crashed (a sanitizer's abort included) is restarted
	# by the master and would go unseen otherwise.
	grep "exited on signal" "$T_DIR/error.log" && fail "an nginx worker crashed"
	# Each worker served requests, on connections the master accepted on
	# U-Net and handed over (its access log line: the worker's pid): the
	# first 2, then the 2 of the reload.
	workers=$(awk '{ print $1 }' "$T_DIR/access.log" | sort -u | wc -l)
	((workers == 4)) || fail "the requests were served by $workers worker processes, not 4"
	n_handed=$(grep -c "on U-Net handed to child" "$T_DIR/nginx.log")
	n_accepted=$(grep -c "tcp accepted on fd [0-9]* from $IP_B:[0-9]*: U-Net, relayed by the parent" "$T_DIR/nginx.log")
	((n_handed >= 4 && n_accepted == n_handed)) ||
		fail "$n_handed connections handed to the workers, $n_accepted accepted by them"
	grep -q "tcp .*: kernel" "$T_DIR/nginx.log" && fail "a TCP socket of nginx went to the kernel"
	note "wrk: $n requests of 600 kB over U-Net; $n_handed connections handed to 2 workers"
	after=$(kernel_tcp_segs a)
	kernel_tcp_quiet "$before" "$after"
}
