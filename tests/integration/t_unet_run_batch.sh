# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_batch.sh - unet-run's --batch-sends (docs/unet-run.md,
# "Batched sends"): the answers a thread writes to the sockets one
# epoll_wait returned leave together when it next waits.  Sourced by
# run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_batch_sends|-|90|a Python epoll server under unet-run answers 8 kernel TCP clients whose requests one epoll_wait returns, 4 rounds, every answer checked byte for byte; traced (strace), with --batch-sends no AF_XDP kick is made while it answers (before, one per answer) and the answers leave once the thread waits again: through epoll_wait on even rounds, through a blocking read passed to the kernel on odd ones (either missing: the client waits for its answers in vain); without --batch-sends, the same server kicks once per answer (the trace's count is what is checked)"
)

# batch_kicks TRACE ROUNDS: for each round, "held H after A": the AF_XDP
# kicks (zero-length sendto) strace saw between the server's first and
# second getppid mark (while it answered), and between the second and
# the next mark (its third on even rounds; the next round's first on odd
# ones, or the end).
batch_kicks() {
	awk -v rounds="$2" '
	/ getppid\(\)/ { mark++; next }
	/ sendto\([0-9]+, NULL, 0, MSG_DONTWAIT/ { kicks[mark]++ }
	END {
		m = 0
		for (r = 0; r < rounds; r++) {
			m++                      # answering starts
			held = kicks[m] + 0
			m++                      # answered
			after = kicks[m] + 0
			if (r % 2 == 0) m++      # after the wait
			printf "held %d after %d\n", held, after
		}
	}' "$1"
}

# batch_run NAME [unet-run options]: the server under unet-run (traced)
# against the client in b; fails unless every answer came.
batch_run() {
	local name=$1 pid
	shift
	rm -f "$T_DIR/$name.fifo"
	mkfifo "$T_DIR/$name.fifo"
	unet_bg_a strace -f -qq -e trace=sendto,getppid -o "$T_DIR/$name.trace" \
		"${RUN_ENV[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/$name.log" "$@" \
		/usr/bin/python3 "$ROOT/tests/tools/batch-server.py" "$IP_A" 7960 8 4 "$T_DIR/$name.fifo" \
		>"$T_DIR/$name.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/$name.out" "$pid" >/dev/null
	if ! in_b timeout 30 /usr/bin/python3 "$ROOT/tests/tools/batch-client.py" "$IP_A" 7960 8 4 \
		"$T_DIR/$name.fifo" >"$T_DIR/$name.client" 2>&1; then
		cat "$T_DIR/$name.client" "$T_DIR/$name.out" "$T_DIR/$name.log"
		fail "$name: the client did not get every answer"
	fi
	unet_bg_wait "$pid" 10
	cat "$T_DIR/$name.client"
	grep -q "tcp accepted on fd [0-9]* from $IP_B:[0-9]*: U-Net" "$T_DIR/$name.log" ||
		fail "$name: the connections were not on U-Net"
	grep -q "^done" "$T_DIR/$name.out" || { cat "$T_DIR/$name.out"; fail "$name: the server did not finish"; }
}

t_unet_run_batch_sends() {
	command -v strace >/dev/null || skip "strace is not installed"
	local r held after
	T_MODE=${T_MODE:-native}
	tcp_run_setup
	batch_run batched --batch-sends
	r=0
	while read -r _ held _ after; do
		note "batched, round $r: $held kicks while answering, $after after"
		((held == 0)) || fail "round $r: $held kicks while answering under --batch-sends (held: 0)"
		((after >= 1)) || fail "round $r: no kick after the answers under --batch-sends"
		r=$((r + 1))
	done < <(batch_kicks "$T_DIR/batched.trace" 4)
	((r == 4)) || fail "the trace has $r rounds, not 4"
	batch_run plain
	r=0
	while read -r _ held _ after; do
		note "not batched, round $r: $held kicks while answering"
		((held >= 8)) || fail "round $r: $held kicks for 8 answers without --batch-sends (the count misses kicks)"
		r=$((r + 1))
	done < <(batch_kicks "$T_DIR/plain.trace" 4)
	((r == 4)) || fail "the trace has $r rounds, not 4"
}
