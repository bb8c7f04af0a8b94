# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run.sh - unet-run and libunet-preload.so (docs/unet-run.md):
# unmodified programs under it behave as without it, and its log says,
# per socket, where the socket went and why.  Sourced by run.sh (see
# lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_passthrough|-|90|curl and a Python client under unet-run against kernel servers in the other namespace: same bytes as without it; the log gives each socket's fate and reason (AF_UNIX, loopback, interface not U-Net's, not attached; UDP and TCP by the named interface on U-Net)"
	"unet_run_install|-|120|unet-run built for one LIBDIR and then for another (make ... LIBDIR=/usr/lib/<multiarch>, as the Debian build and make install pass it) finds its library under the LIBDIR it was last built for, relative to itself, wherever the tree is copied"
	"unet_run_library|-|60|libunet-preload.so exports only the libc names it interposes, leaves programs that use no socket alone, is found beside unet-run and under PREFIX/lib/unet-xdp; unet-run's exit codes and option errors"
)

# The python3 of the system (not a user's shim): the tests run it in
# other namespaces and under the preload.
RUN_PY=/usr/bin/python3

# unet_run_env: print the environment a program under the preload needs
# in this build: a library built with ASan (make SAN=1: it needs
# libasan) needs the sanitizer's runtime loaded before it (LD_PRELOAD's
# first entry; unet-run appends its own library), and the program's own
# leaks are not the library's to report.
unet_run_env() {
	if readelf -d "$BUILD/libunet-preload.so" | grep -q 'NEEDED.*\[libasan'; then
		local asan
		asan=$(gcc -print-file-name=libasan.so)
		[[ -e $asan ]] || fail "sanitized build, but no libasan.so to preload"
		echo "LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0"
	fi
}

# urun SIDE ARGS...: unet-run ARGS... in that side's namespace.
urun() {
	local side=$1
	shift
	# shellcheck disable=SC2046
	in_"$side" env $(unet_run_env) "$BUILD/unet-run" "$@"
}

# log_has LOG REGEX WHAT: the log has a line matching REGEX.
log_has() {
	grep -qE "$2" "$1" || { cat "$1"; fail "log $1 has no line for $3 (/$2/)"; }
}

# The client both runs use: talks to the kernel's TCP and UDP echo in
# namespace b, opens an AF_UNIX pair and a loopback connection, and
# prints what came back.
write_client() {
	cat >"$T_DIR/client.py" <<'PY'
import os, socket, sys
peer = sys.argv[1]
a, b = socket.socketpair()
a.sendall(b"unix"); print("unix", b.recv(16))
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
c = socket.create_connection(srv.getsockname()); x, _ = srv.accept()
c.sendall(b"loop"); print("loop", x.recv(16))
t = socket.create_connection((peer, 7200))
msg = bytes(range(256)) * 300
t.sendall(msg); t.shutdown(socket.SHUT_WR)
got = b""
while True:
    d = t.recv(65536)
    if not d: break
    got += d
print("tcp", len(got), got == msg)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(5)
for i in range(20):
    u.sendto(b"d%03d" % i, (peer, 7201)); print("udp", u.recv(64))
d = os.dup(u.fileno()); os.close(d)
PY
	cat >"$T_DIR/server.py" <<'PY'
import socket, sys, threading
ip = sys.argv[1]
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((ip, 7200)); ls.listen()
us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); us.bind((ip, 7201))
def udp():
    while True:
        d, a = us.recvfrom(64); us.sendto(d, a)
threading.Thread(target=udp, daemon=True).start()
print("ready endpoint=0", flush=True)
while True:
    c, _ = ls.accept()
    while True:
        d = c.recv(65536)
        if not d: break
        c.sendall(d)
    c.close()
PY
}

t_unet_run_passthrough() {
	setup_ns
	write_client
	local pid
	unet_bg_b "$RUN_PY" "$T_DIR/server.py" "$IP_B" >"$T_DIR/server.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/server.log" "$pid" >/dev/null
	mkdir -p "$T_DIR/www" && head -c 100000 /dev/urandom >"$T_DIR/www/blob"
	unet_bg_b "$RUN_PY" -m http.server --bind "$IP_B" 7280 --directory "$T_DIR/www" \
		>"$T_DIR/http.log" 2>&1
	local i
	for ((i = 0; i < 100; i++)); do
		in_a curl -sf -o /dev/null "http://$IP_B:7280/blob" && break
		sleep 0.1
	done

	in_a "$RUN_PY" "$T_DIR/client.py" "$IP_B" >"$T_DIR/plain.out" 2>&1 ||
		{ cat "$T_DIR/plain.out"; fail "the client failed without unet-run"; }
	grep -qx "tcp 76800 True" "$T_DIR/plain.out" || fail "the client's TCP echo is wrong without unet-run"
	# The interface named: it would be U-Net's, and says that the
	# protocol is what is missing.
	urun a --iface "$IF_A" --log "$T_DIR/named.log" "$RUN_PY" "$T_DIR/client.py" "$IP_B" \
		>"$T_DIR/named.out" 2>&1 || { cat "$T_DIR/named.out"; fail "the client failed under unet-run"; }
	cmp "$T_DIR/plain.out" "$T_DIR/named.out" || fail "output differs under unet-run"
	cat "$T_DIR/named.log"
	log_has "$T_DIR/named.log" "fd [0-9]+,[0-9]+ AF_UNIX socketpair: kernel \(not AF_INET\)" "the AF_UNIX pair"
	log_has "$T_DIR/named.log" "fd [0-9]+ tcp bind 127\.0\.0\.1:0: kernel \(loopback\)" "the loopback listener"
	log_has "$T_DIR/named.log" "fd [0-9]+ tcp connect 127\.0\.0\.1:[0-9]+: kernel \(loopback\)" "the loopback client"
	log_has "$T_DIR/named.log" "fd [0-9]+ accepted on fd [0-9]+: kernel" "the accepted connection"
	log_has "$T_DIR/named.log" \
		"fd [0-9]+ tcp connect $IP_B:7200: U-Net \(endpoint [0-9]+ on $IF_A \(direct\), port [0-9]+\)" \
		"the TCP client"
	log_has "$T_DIR/named.log" \
		"fd [0-9]+ udp sendto $IP_B:7201: U-Net \(endpoint [0-9]+ on $IF_A \(direct\), port [0-9]+\)" \
		"the UDP client"
	# One line per socket: the UDP socket is decided once, not per datagram.
	[[ $(grep -c "udp sendto" "$T_DIR/named.log") == 1 ]] || fail "the UDP socket was decided more than once"

	# Another interface named: traffic by IF_A is not U-Net's.
	urun a --iface nosuch0 --log "$T_DIR/other.log" "$RUN_PY" "$T_DIR/client.py" "$IP_B" \
		>"$T_DIR/other.out" 2>&1 || fail "the client failed under unet-run --iface nosuch0"
	cmp "$T_DIR/plain.out" "$T_DIR/other.out" || fail "output differs under unet-run --iface nosuch0"
	log_has "$T_DIR/other.log" \
		"tcp connect $IP_B:7200: kernel \(by $IF_A, not a U-Net interface \(UNET_RUN_IFACE=nosuch0\)\)" \
		"the TCP client, interface not named"

	# Nothing named, nothing attached (the environment, not the options):
	# the named run's endpoint attached the program, so detach it.  (With
	# it attached, an unnamed interface is served: unet_run_signals.)
	ctl_a detach "$IF_A" >/dev/null 2>&1 || fail "detach $IF_A"
	in_a env $(unet_run_env) UNET_RUN_LOG="$T_DIR/none.log" UNET_PIN_ROOT="$UNET_PIN_ROOT" \
		"$BUILD/unet-run" "$RUN_PY" "$T_DIR/client.py" "$IP_B" >"$T_DIR/none.out" 2>&1 ||
		fail "the client failed under unet-run without --iface"
	cmp "$T_DIR/plain.out" "$T_DIR/none.out" || fail "output differs under unet-run without --iface"
	log_has "$T_DIR/none.log" "tcp connect $IP_B:7200: kernel \(by $IF_A, which has no XDP program attached\)" \
		"the TCP client, nothing attached"

	# curl (a C program, non-blocking connect) gets the same bytes.  Not
	# in a sanitized build: curl with libasan preloaded hangs before
	# main (even `curl --version`, without this library).
	if [[ -n $(unet_run_env) ]]; then
		note "curl step left out: curl does not start with libasan preloaded"
		return 0
	fi
	in_a curl -sf -o "$T_DIR/plain.blob" "http://$IP_B:7280/blob" || fail "curl failed without unet-run"
	urun a --iface "$IF_A" --log "$T_DIR/curl.log" curl -sf -o "$T_DIR/run.blob" \
		"http://$IP_B:7280/blob" || fail "curl failed under unet-run"
	cmp "$T_DIR/www/blob" "$T_DIR/run.blob" || fail "curl under unet-run got other bytes"
	cat "$T_DIR/curl.log"
	log_has "$T_DIR/curl.log" "tcp connect $IP_B:7280: U-Net \(endpoint [0-9]+ on $IF_A" "curl's connection"
}

t_unet_run_library() {
	local so=$BUILD/libunet-preload.so want got
	[[ -r $so ]] || fail "$so not built"
	want="__sysv_signal accept accept4 bind bsd_signal close connect dup dup2 dup3 epoll_ctl epoll_pwait epoll_pwait2 epoll_wait execl execle execlp execv execve execvp execvpe fcntl fcntl64 fexecve getpeername getsockname getsockopt ioctl listen poll ppoll pselect read readv recv recvfrom recvmmsg recvmsg select send sendfile sendfile64 sendmmsg sendmsg sendto setsockopt shutdown sigaction signal socket socketpair sysv_signal write writev"
	got=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "W" || $2 == "D" || $2 == "B" {print $3}' |
		sed 's/@.*//' | sort | tr '\n' ' ')
	[[ ${got% } == "$want" ]] || fail "libunet-preload.so exports '$got', want '$want'"

	# Programs that use no socket: unchanged output and exit status.
	local pre
	pre=$(unet_run_env)
	[[ $(env $pre LD_PRELOAD="${pre:+$(sed -n 's/^LD_PRELOAD=\([^ ]*\).*/\1 /p' <<<"$pre")}$so" \
		sh -c 'echo hello; exit 3'; echo "rc=$?") == $'hello\nrc=3' ]] ||
		fail "a shell under LD_PRELOAD=libunet-preload.so behaved differently"
	# shellcheck disable=SC2086
	env $pre "$BUILD/unet-run" sh -c 'exit 7'
	[[ $? == 7 ]] || fail "unet-run did not pass on the program's exit status"
	# shellcheck disable=SC2086
	env $pre "$BUILD/unet-run" /nonexistent/prog 2>"$T_DIR/enoent.err"
	[[ $? == 127 ]] || fail "unet-run of a missing program did not exit 127"
	grep -q "nonexistent/prog" "$T_DIR/enoent.err" || fail "unet-run did not name the missing program"
	# shellcheck disable=SC2086
	env $pre "$BUILD/unet-run" --spin-us x true 2>"$T_DIR/bad.err"
	[[ $? == 2 ]] || fail "unet-run --spin-us x did not exit 2"
	grep -q "spin-us" "$T_DIR/bad.err" || fail "unet-run did not say what was wrong with --spin-us"
	# shellcheck disable=SC2086
	env $pre "$BUILD/unet-run" --help | grep -q "^usage: unet-run" || fail "unet-run --help"

	# The library is found beside unet-run (the build tree) and under
	# PREFIX/lib/unet-xdp for an install under any prefix.
	# (Not a prefix with a space: ld.so splits LD_PRELOAD at spaces, so
	# that one would name the library and not load it; docs/unet-run.md.)
	local prefix=$T_DIR/prefix other=$T_DIR/other/prefix
	for p in "$prefix" "$other"; do
		mkdir -p "$p/bin" "$p/lib/unet-xdp"
		cp "$BUILD/unet-run" "$p/bin/" || fail "copying unet-run into $p"
		cp "$so" "$p/lib/unet-xdp/" || fail "copying the library into $p"
		# shellcheck disable=SC2086
		env $pre "$p/bin/unet-run" sh -c 'echo "$LD_PRELOAD"' >"$T_DIR/ldp.out" 2>"$T_DIR/ldp.err"
		grep -qF "$p/lib/unet-xdp/libunet-preload.so" "$T_DIR/ldp.out" ||
			fail "unet-run under $p did not preload its library: $(cat "$T_DIR/ldp.out")"
		[[ ! -s $T_DIR/ldp.err ]] || fail "preloading under $p: $(cat "$T_DIR/ldp.err")"
	done
	# shellcheck disable=SC2086
	env $pre "$BUILD/unet-run" sh -c 'echo "$LD_PRELOAD"' >"$T_DIR/ldp.out"
	grep -qF "$(readlink -f "$BUILD")/libunet-preload.so" "$T_DIR/ldp.out" ||
		fail "unet-run in the build tree did not preload the library beside it: $(cat "$T_DIR/ldp.out")"
	# The library really is loaded: its log appears.
	# shellcheck disable=SC2086
	env $pre "$prefix/bin/unet-run" --log "$T_DIR/lib.log" "$RUN_PY" -c \
		'import socket; socket.socket(socket.AF_UNIX)' || fail "python under the installed unet-run"
	log_has "$T_DIR/lib.log" "AF_UNIX socket: kernel \(not AF_INET\)" "the AF_UNIX socket"
}

# unet-run looks for its library at LIBDIR/unet-xdp as seen from BINDIR,
# a path compiled in: building it again with another LIBDIR must change
# it, or `make install LIBDIR=...` after `make` installs a unet-run that
# preloads nothing (ld.so ignores the bare name it falls back to).
t_unet_run_install() {
	local b=$T_DIR/build lib=usr/lib/unet-test-multiarch d
	make -s -C "$ROOT" BUILD="$b" "$b/unet-run" >"$T_DIR/make.log" 2>&1 ||
		{ cat "$T_DIR/make.log"; fail "make unet-run failed"; }
	make -s -C "$ROOT" BUILD="$b" PREFIX=/usr LIBDIR="/$lib" "$b/unet-run" >>"$T_DIR/make.log" 2>&1 ||
		{ cat "$T_DIR/make.log"; fail "make unet-run LIBDIR=/$lib failed"; }
	# (No prefix with a space: ld.so splits LD_PRELOAD at spaces, see
	# docs/unet-run.md's limits.)
	for d in "$T_DIR/root" "$T_DIR/other/root"; do
		mkdir -p "$d/usr/bin" "$d/$lib/unet-xdp"
		cp "$b/unet-run" "$d/usr/bin/" || fail "copying unet-run into $d"
		cp "$BUILD/libunet-preload.so" "$d/$lib/unet-xdp/" || fail "copying the library into $d"
		# The library is LD_PRELOAD's last entry (a sanitized build's
		# runtime comes first, from unet_run_env).
		# shellcheck disable=SC2016,SC2046
		env $(unet_run_env) "$d/usr/bin/unet-run" sh -c 'echo "$LD_PRELOAD"' >"$T_DIR/ldp.out" 2>"$T_DIR/ldp.err"
		[[ $(sed 's/.*[ :]//' "$T_DIR/ldp.out") == "$d/$lib/unet-xdp/libunet-preload.so" ]] ||
			fail "unet-run built for LIBDIR=/$lib, copied under $d, did not preload $d/$lib/unet-xdp/libunet-preload.so: $(cat "$T_DIR/ldp.out")"
		[[ ! -s $T_DIR/ldp.err ]] || fail "preloading under $d: $(cat "$T_DIR/ldp.err")"
	done
}
