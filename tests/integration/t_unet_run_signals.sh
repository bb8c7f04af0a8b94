# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_signals.sh - signal handlers and blocking socket calls under
# unet-run (docs/unet-run.md "Signals"): the kernel's rules (signal(7)),
# checked first on the kernel's sockets so the expectations are the
# kernel's.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_signals|-|90|tests/tools/socket-signals, first on the kernel's sockets, then under unet-run on U-Net: a handler with SA_RESTART lets a blocking UDP and TCP recv go on to the data, one without it ends the recv with EINTR (and the next recv gets the data), SO_RCVTIMEO makes it EINTR even with SA_RESTART, poll ends with EINTR regardless; sigaction gives back the handler the program set; unet-run with no --iface serves the interface the program is attached to; a handler that sends on the socket while the interrupted thread is inside sendto on it, 300 times during 3000 sends: every datagram reaches the kernel's receiver whole and exactly once"
)

t_unet_run_signals() {
	local run_env=() pid c out want got iface=()
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env))
	T_MODE=${T_MODE:-native}
	setup_ns
	attach a
	run_env+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
	# The peer: a UDP echo for "ping"/"pong" that records everything else,
	# one line per datagram, and a TCP echo, on port 7950 of b.
	cat >"$T_DIR/peer.py" <<'PY'
import socket, sys, threading
ip, port, rec = sys.argv[1], int(sys.argv[2]), sys.argv[3]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (no name in Python)
u.bind((ip, port))
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((ip, port)); ls.listen(8)
def tcp():
    while True:
        c, _ = ls.accept()
        d = c.recv(100)
        if d: c.sendall(d)
        threading.Thread(target=lambda c=c: c.recv(1), daemon=True).start()
threading.Thread(target=tcp, daemon=True).start()
print("ready endpoint=0", flush=True)
with open(rec, "w") as f:
    while True:
        d, a = u.recvfrom(2048)
        if d in (b"ping", b"pong"):
            u.sendto(d, a)
        else:
            f.write(d.decode("latin-1").replace("\n", "?") + "\n"); f.flush()
PY
	unet_bg_b /usr/bin/python3 "$T_DIR/peer.py" "$IP_B" 7950 "$T_DIR/rec" >"$T_DIR/peer.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/peer.out" "$pid" >/dev/null
	for c in udp-restart udp-intr udp-timeo tcp-restart poll-intr; do
		out=$(in_a timeout 20 "$BUILD/tools/socket-signals" "$c" "$IP_B" 7950 2>&1) ||
			fail "kernel sockets, $c: $out"
		note "kernel: $out"
		# The first case names no interface: every one with the
		# program attached is served (the pins of this namespace's).
		iface=(--iface "$IF_A")
		[[ $c == udp-restart ]] && iface=()
		out=$(in_a "${run_env[@]}" timeout 20 "$BUILD/unet-run" "${iface[@]}" \
			--log "$T_DIR/$c.log" "$BUILD/tools/socket-signals" "$c" "$IP_B" 7950 2>&1) ||
			{ cat "$T_DIR/$c.log"; fail "unet-run, $c: $out"; }
		note "unet-run: $out"
		grep -qE ": U-Net \\(" "$T_DIR/$c.log" ||
			{ cat "$T_DIR/$c.log"; fail "$c: the socket was not on U-Net"; }
	done
	# A handler that re-enters the library on the thread it interrupted:
	# epoll registrations (a lock of the library's that is not recursive:
	# without deferral, the handler waits for its own thread), then sends.
	out=$(in_a "${run_env[@]}" timeout 30 "$BUILD/unet-run" --iface "$IF_A" \
		--log "$T_DIR/reenter-epoll.log" "$BUILD/tools/socket-signals" reenter-epoll "$IP_B" 7950 2>&1) ||
		{ cat "$T_DIR/reenter-epoll.log"; fail "unet-run, reenter-epoll: $out"; }
	note "unet-run: $out"
	: >"$T_DIR/rec"
	out=$(in_a "${run_env[@]}" timeout 30 "$BUILD/unet-run" --iface "$IF_A" \
		--log "$T_DIR/reenter.log" "$BUILD/tools/socket-signals" reenter "$IP_B" 7950 2>&1) ||
		{ cat "$T_DIR/reenter.log"; fail "unet-run, reenter: $out"; }
	note "unet-run: $out"
	[[ $out =~ sent\ ([0-9]+)\ handled\ ([0-9]+) ]] || fail "reenter: no counts in '$out'"
	want=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
	((BASH_REMATCH[2] > 0)) || fail "reenter: no handler ran"
	wait_until 10 "the receiver has $want datagrams" test "$(wc -l <"$T_DIR/rec")" -ge "$want"
	got=$(wc -l <"$T_DIR/rec")
	((got == want)) || fail "reenter: $got datagrams received, $want sent"
	# Every one whole, and none twice.
	grep -vqE '^[mh][0-9]{5}$' "$T_DIR/rec" &&
		fail "reenter: a datagram came mangled: $(grep -vE '^[mh][0-9]{5}$' "$T_DIR/rec" | head -3)"
	[[ $(sort "$T_DIR/rec" | uniq -d | wc -l) == 0 ]] || fail "reenter: a datagram came twice"
	[[ $(grep -c '^m' "$T_DIR/rec") == "${BASH_REMATCH[1]}" ]] || fail "reenter: the main thread's count differs"
	kill "$pid" 2>/dev/null || true
}
