# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_sockets.sh - `unetctl sockets`: the U-Net sockets of
# processes under unet-run (docs/unetctl.md), and what a hostile local
# user cannot make it say.  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_sockets|-|90|unetctl sockets (text and --json) lists the U-Net sockets of two processes under unet-run (native mode): owner, kind, state, addresses and counters exact; after one execs, its sockets are no longer listed, and the other, exiting, leaves no file; a seeded fuzz (300 files of random slots) lists exactly the well-formed slots; a dead process's file of root's is removed by the next root process that publishes; user nobody sees none of root's sockets, and its forged files (naming pid 1, or its own pid but root as owner, under PID and PID.N) are not believed; a process whose file name nobody took first publishes under PID.N and is listed; names that are no publisher's (0PID, 00PID, ' PID', PID.0) and a second name of a file list no process twice; a seeded fuzz of 50 process names (comm) chosen by user nobody, control bytes and bytes that are not UTF-8 among them, prints them escaped: text in printable ASCII, one row each, JSON valid"
)

t_unet_run_sockets() {
	local run_env=() pid1 pid2 fake out
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env))
	T_MODE=${T_MODE:-native}
	# One process per interface (a direct endpoint takes the device's
	# queue): one holder in each namespace, each with a kernel peer in
	# the other.
	setup_ns
	attach a
	attach b
	run_env+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
	cat >"$T_DIR/peer.py" <<'PY'
import socket, sys, threading
ip = sys.argv[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((ip, 7920))
def udp():
    while True:
        d, a = u.recvfrom(65536); u.sendto(d, a)
threading.Thread(target=udp, daemon=True).start()
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((ip, 7921)); ls.listen(4)
print("ready endpoint=0", flush=True)
while True:
    c, _ = ls.accept()
    d = c.recv(1000, socket.MSG_WAITALL); c.sendall(d)
    threading.Thread(target=lambda c=c: c.recv(1), daemon=True).start()
PY
	# Holds a UDP socket (3 datagrams each way), a TCP connection (1000
	# bytes each way) and, with "listen", a TCP listener, until the FIFO
	# it is given has been opened and closed by a writer (a background
	# job's stdin is /dev/null); then, with "listen", it execs sleep.
	cat >"$T_DIR/holder.py" <<'PY'
import os, socket, sys
peer, port = sys.argv[1], int(sys.argv[2])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(10)
u.bind(("0.0.0.0", port))
for i in range(3):
    u.sendto(b"x" * (i + 1), (peer, 7920)); assert u.recv(100) == b"x" * (i + 1)
c = socket.create_connection((peer, 7921), timeout=10)
c.sendall(bytes(1000))
got = b""
while len(got) < 1000:
    got += c.recv(1000)
if sys.argv[4:] == ["listen"]:
    l = socket.socket(); l.bind(("0.0.0.0", port + 1)); l.listen(1)
print("ready endpoint=0", flush=True)
open(sys.argv[3]).read()
if sys.argv[4:] == ["listen"]:
    os.execv("/bin/sleep", ["sleep", "60"])
PY
	# User nobody's forgeries (the script goes by -c: nobody cannot read
	# the test's directory), all locked as a live publisher's are and
	# otherwise well made: for pid 1 (root's), and for its own pid with
	# a header that claims root, each under both forms of name.
	cat >"$T_DIR/forge.py" <<'PY'
import fcntl, os, signal, struct
def stime(pid):
    s = open("/proc/%d/stat" % pid).read()
    return int(s[s.rindex(")") + 2:].split()[19])
def forge(name, pid, uid):
    hdr = struct.pack("=IIiIQII", 0x53524e55, 1, pid, uid, stime(pid), 1024, 0)
    slot = struct.pack("=IIBBHHHIIQQ", 0, 99, 1, 1, 7777, 0, 0, 0x0100007f, 0, 4242, 4242)
    f = open("/run/unet-run/%s" % name, "wb")
    f.write(hdr + slot + bytes(40 * 1023)); f.flush()
    fcntl.flock(f, fcntl.LOCK_EX)
    return f
keep = [forge("1", 1, os.getuid()), forge(str(os.getpid()), os.getpid(), 0),
        forge("1.5", 1, os.getuid()), forge("%d.9" % os.getpid(), os.getpid(), 0)]
print("ready endpoint=0 pid", os.getpid(), flush=True)
while True:
    signal.pause()
PY
	unet_bg_b /usr/bin/python3 "$T_DIR/peer.py" "$IP_B" >"$T_DIR/peer.out" 2>&1
	T_CLEANUP+=("kill $UNET_BG_PID")
	wait_ready "$T_DIR/peer.out" "$UNET_BG_PID" >/dev/null
	unet_bg_a /usr/bin/python3 "$T_DIR/peer.py" "$IP_A" >"$T_DIR/peer_a.out" 2>&1
	T_CLEANUP+=("kill $UNET_BG_PID")
	wait_ready "$T_DIR/peer_a.out" "$UNET_BG_PID" >/dev/null
	mkfifo "$T_DIR/go1" "$T_DIR/in1" "$T_DIR/in2"
	# A file as a process killed with SIGKILL leaves it: root's, its pid
	# gone, unlocked.  The next process of root's that publishes removes
	# it.
	local dead
	true &
	dead=$!
	wait "$dead"
	[[ -d /run/unet-run ]] || mkdir -m 1777 /run/unet-run
	head -c 40992 /dev/zero >"/run/unet-run/$dead"
	T_CLEANUP+=("rm -f /run/unet-run/$dead")
	# Holder 1's pid is known before it publishes (the shell that execs
	# unet-run waits on go1): user nobody takes the file name first, as
	# a squatter could for every pid, or a killed process of theirs that
	# had the pid leaves it.  Holder 1 publishes under PID.N instead.
	# shellcheck disable=SC2016
	unet_bg_a bash -c 'read -r _ <"$1"; shift; exec "$@"' _ "$T_DIR/go1" \
		"${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/h1.log" \
		/usr/bin/python3 "$T_DIR/holder.py" "$IP_B" 7930 "$T_DIR/in1" listen >"$T_DIR/h1.out" 2>&1
	pid1=$UNET_BG_PID
	T_CLEANUP+=("rm -f /run/unet-run/$pid1 /run/unet-run/$pid1.*")
	setpriv --reuid=65534 --regid=65534 --clear-groups touch "/run/unet-run/$pid1" ||
		fail "user nobody cannot make /run/unet-run/$pid1"
	# shellcheck disable=SC2016
	timeout 10 sh -c 'echo go >"$1"' sh "$T_DIR/go1" || fail "holder 1 does not wait on go1"
	unet_bg_b "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_B" --log "$T_DIR/h2.log" \
		/usr/bin/python3 "$T_DIR/holder.py" "$IP_A" 7940 "$T_DIR/in2" >"$T_DIR/h2.out" 2>&1
	pid2=$UNET_BG_PID
	T_CLEANUP+=("rm -f /run/unet-run/$pid2 /run/unet-run/$pid2.7")
	wait_ready "$T_DIR/h1.out" "$pid1" >/dev/null
	wait_ready "$T_DIR/h2.out" "$pid2" >/dev/null
	local alt1=(/run/unet-run/"$pid1".*)
	[[ ${#alt1[@]} == 1 && -f ${alt1[0]} && $(stat -c %u "${alt1[0]}") == 0 &&
		$(stat -c %u "/run/unet-run/$pid1") == 65534 ]] ||
		fail "holder 1 did not publish under PID.N beside nobody's $pid1: $(ls -ln "/run/unet-run/$pid1" "${alt1[@]}" 2>&1)"
	# Names no publisher makes (nobody's, empty): a reader that took the
	# first ones for PID would list holder 2 again for each.  And a
	# second name of holder 2's own file, a link as its owner may make.
	setpriv --reuid=65534 --regid=65534 --clear-groups touch "/run/unet-run/0$pid2" \
		"/run/unet-run/00$pid2" "/run/unet-run/ $pid2" "/run/unet-run/+$pid2" \
		"/run/unet-run/$pid2.0" "/run/unet-run/$pid2.01" ||
		fail "user nobody cannot make files under /run/unet-run"
	T_CLEANUP+=("rm -f /run/unet-run/0$pid2 /run/unet-run/00$pid2 '/run/unet-run/ $pid2' /run/unet-run/+$pid2 /run/unet-run/$pid2.0 /run/unet-run/$pid2.01")
	ln "/run/unet-run/$pid2" "/run/unet-run/$pid2.7" || fail "cannot link holder 2's file"
	[[ -e /run/unet-run/$dead ]] && fail "the file of dead process $dead was not removed"
	[[ -e /run/unet-run/1 || -e /run/unet-run/1.5 ]] && fail "/run/unet-run/1 or 1.5 exists before the test made it"
	T_CLEANUP+=("rm -f /run/unet-run/1 /run/unet-run/1.5")
	unet_bg_a setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 -c "$(cat "$T_DIR/forge.py")" >"$T_DIR/forge.out" 2>&1
	T_CLEANUP+=("kill $UNET_BG_PID")
	wait_ready "$T_DIR/forge.out" "$UNET_BG_PID" >/dev/null
	fake=$(sed -n 's/^ready endpoint=0 pid \([0-9]*\)/\1/p' "$T_DIR/forge.out")
	T_CLEANUP+=("rm -f /run/unet-run/$fake /run/unet-run/$fake.9")

	# The sockets each holder made, as root sees them (its own pid's
	# sockets only: other tests' processes may be listed too).
	out=$(in_a "$UNETCTL" --json sockets) || fail "unetctl --json sockets failed"
	echo "$out"
	# shellcheck disable=SC2016
	local q='[.sockets[] | select(.pid == $p) | [.uid, .comm, .kind, .state, .local, .peer,
		(.rx_datagrams // .rx_bytes), (.tx_datagrams // .tx_bytes)] | map(tostring) | join(" ")] | sort | join("\n")'
	[[ $(jq -r --argjson p "$pid1" "$q" <<<"$out") == "0 python3 tcp connected $IP_A:"*" $IP_B:7921 1000 1000
0 python3 tcp listening $IP_A:7931 0.0.0.0:0 0 0
0 python3 udp bound $IP_A:7930 0.0.0.0:0 3 3" ]] || fail "process $pid1's sockets are not listed as they are: $(jq -r --argjson p "$pid1" "$q" <<<"$out")"
	[[ $(jq -r --argjson p "$pid2" "$q" <<<"$out") == "0 python3 tcp connected $IP_B:"*" $IP_A:7921 1000 1000
0 python3 udp bound $IP_B:7940 0.0.0.0:0 3 3" ]] || fail "process $pid2's sockets are not listed as they are"
	jq -e --argjson f "$fake" '[.sockets[] | select(.pid == 1 or .pid == $f)] | length == 0' <<<"$out" >/dev/null ||
		fail "unetctl believed a forged file"
	out=$(in_a "$UNETCTL" sockets --pid "$pid1") || fail "unetctl sockets --pid failed"
	echo "$out"
	grep -q "pid $pid1 .*kind udp  state bound  local $IP_A:7930  peer 0.0.0.0:0  rx_datagrams 3  tx_datagrams 3" <<<"$out" ||
		fail "the text listing lacks the UDP socket"
	grep -qv "pid $pid1 " <<<"$out" && fail "--pid $pid1 listed another process"

	# User nobody: its own forged files are no sockets of its, root's not
	# readable.
	out=$(in_a setpriv --reuid=65534 --regid=65534 --clear-groups "$UNETCTL" --json sockets) ||
		fail "unetctl sockets as nobody failed"
	echo "$out"
	jq -e '.sockets | length == 0' <<<"$out" >/dev/null || fail "user nobody was shown sockets: $out"

	# A seeded fuzz of what unetctl parses: root's own file (so every
	# check of the file passes) with random slots, 300 rounds; unetctl
	# must list exactly the well-formed ones, each as it is.
	cat >"$T_DIR/fuzz.py" <<'PY'
import fcntl, ipaddress, json, os, random, struct, subprocess, sys
unetctl, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
pid = os.getpid()
s = open("/proc/self/stat").read()
stime = int(s[s.rindex(")") + 2:].split()[19])
path = "/run/unet-run/%d" % pid
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
hdr = struct.pack("=IIiIQII", 0x53524e55, 1, pid, os.geteuid(), stime, 1024, 0)
STATES = {1: {1: "bound", 2: "connected"}, 2: {2: "connected", 3: "listening"}}
listed = 0
try:
    for rnd_i in range(300):
        slots, want = [], []
        for i in range(1024):
            if rnd.random() < 0.97:
                slots.append(bytes(40)); continue
            b = bytearray(rnd.randbytes(40))
            if rnd.random() < 0.7:      # often well formed, to list some
                b[0:4] = struct.pack("=I", rnd.randrange(0, 1 << 32, 2))
                b[8] = rnd.choice([1, 2]); b[9] = rnd.choice([1, 2, 3])
            seq, fdn, kind, state, lp, pp, _, la, pa, rx, tx = struct.unpack("=IIBBHHHIIQQ", b)
            if seq % 2 == 0 and kind in STATES and state in STATES[kind] and fdn <= 0x7fffffff:
                want.append((fdn, "udp" if kind == 1 else "tcp", STATES[kind][state], la, lp, pa, pp, rx, tx))
            slots.append(bytes(b))
        os.pwrite(fd, hdr + b"".join(slots), 0)
        out = json.loads(subprocess.run([unetctl, "--json", "sockets", "--pid", str(pid)],
                                        check=True, capture_output=True).stdout)
        got = []
        for e in out["sockets"]:
            assert e["pid"] == pid and e["uid"] == os.geteuid(), e
            got.append(e)
        assert len(got) == len(want), (rnd_i, len(got), len(want))
        listed += len(got)
        for e, w in zip(got, want):
            ntoa = lambda a, p: "%s:%d" % (ipaddress.IPv4Address(struct.pack("=I", a)),
                                           int.from_bytes(struct.pack("=H", p), "big"))
            rxk = "rx_datagrams" if w[1] == "udp" else "rx_bytes"
            txk = "tx_datagrams" if w[1] == "udp" else "tx_bytes"
            assert (e["fd"], e["kind"], e["state"], e["local"], e["peer"], e[rxk], e[txk]) == \
                (w[0], w[1], w[2], ntoa(w[3], w[4]), ntoa(w[5], w[6]), w[7], w[8]), (e, w)
    assert listed > 300, listed  # the rounds did list sockets
    print("fuzz ok", listed, flush=True)
finally:
    os.unlink(path)
PY
	in_a /usr/bin/python3 "$T_DIR/fuzz.py" "$UNETCTL" 20261127 >"$T_DIR/fuzz.out" 2>&1 ||
		{ cat "$T_DIR/fuzz.out"; fail "the seeded fuzz of unetctl sockets failed"; }
	grep -q "^fuzz ok" "$T_DIR/fuzz.out" || fail "the fuzz did not finish"
	note "$(cat "$T_DIR/fuzz.out")"

	# A process's name (comm) is its owner's to set to any bytes: 50 of
	# user nobody's processes, each with a file of its own, named to
	# move root's cursor, end or forge a row, break the JSON (the first
	# ones), or at random from a seed.  Root's listing shows each once,
	# escaped: text all printable ASCII with \xNN for the rest, JSON
	# valid UTF-8 with what was not UTF-8 replaced.
	cat >"$T_DIR/comm.py" <<'PY'
import ctypes, fcntl, json, os, random, select, struct, subprocess, sys
unetctl, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
libc = ctypes.CDLL(None)
comms = [b"\x1b[Gpid 1  uid 0", b"\xff\xfe", b"a\nb", b"\rpid 1", b"\\x1b", b"\x9b2J",
         b"\xe2\x82A", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", "\u00e9\U0001f600".encode(),
         b'"}],"x":[{"']
comms += [bytes(rnd.randrange(1, 256) for _ in range(rnd.randrange(1, 16)))
          for _ in range(50 - len(comms))]
def child(comm, ready, go):
    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
    libc.prctl(4, 1, 0, 0, 0)                          # PR_SET_DUMPABLE: /proc/PID is nobody's
    libc.prctl(15, ctypes.c_char_p(comm), 0, 0, 0)     # PR_SET_NAME
    pid = os.getpid()
    s = open("/proc/self/stat", "rb").read()
    stime = int(s[s.rindex(b")") + 2:].split()[19])
    path = "/run/unet-run/%d" % pid
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        hdr = struct.pack("=IIiIQII", 0x53524e55, 1, pid, 65534, stime, 1024, 0)
        slot = struct.pack("=IIBBHHHIIQQ", 0, 3, 1, 1, 0, 0, 0, 0, 0, 0, 0)  # fd 3, UDP, bound
        os.pwrite(fd, hdr + slot + bytes(40 * 1023), 0)
        os.write(ready, b"r")
        os.read(go, 1)                                 # until the parent closes it
    finally:
        os.unlink(path)
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
pids = {}
try:
    for comm in comms:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(ready_r); os.close(go_w)
                child(comm, ready_w, go_r)
                code = 0
            finally:
                os._exit(code)
        pids[pid] = comm
    os.close(ready_w)
    n = 0
    while n < len(comms):
        assert select.select([ready_r], [], [], 10)[0], "the processes are not ready"
        got = os.read(ready_r, 64)
        assert got, "a process ended before it was ready"
        n += len(got)
    raw = subprocess.run([unetctl, "--json", "sockets"], check=True, capture_output=True).stdout
    rows = {}
    for e in json.loads(raw)["sockets"]:                # bytes: must be UTF-8
        rows.setdefault(e["pid"], []).append(e)
    for pid, comm in pids.items():
        r = rows.get(pid, [])
        assert len(r) == 1 and r[0]["uid"] == 65534, (comm, r)
        assert r[0]["comm"] == comm.decode("utf-8", "replace"), (comm, r[0]["comm"])
    text = subprocess.run([unetctl, "sockets"], check=True, capture_output=True).stdout
    bad = [b for b in text if not (0x20 <= b < 0x7f or b == 0x0a)]
    assert not bad, "the text holds bytes outside printable ASCII: %r" % bytes(bad)
    lines = text.split(b"\n")[:-1]
    assert all(l.startswith(b"pid ") for l in lines), "a row does not begin with its pid"
    for pid, comm in pids.items():
        esc = "".join("\\\\" if b == 0x5c else chr(b) if 0x20 <= b < 0x7f else "\\x%02x" % b
                      for b in comm)
        want = ("pid %d  uid 65534  comm %s  fd 3  kind udp  state bound  local 0.0.0.0:0  "
                "peer 0.0.0.0:0  rx_datagrams 0  tx_datagrams 0" % (pid, esc)).encode()
        mine = [l for l in lines if l.startswith(b"pid %d " % pid)]
        assert mine == [want], (comm, mine, want)
    print("comm fuzz ok", len(pids), flush=True)
finally:
    os.close(go_w)
    for pid in pids:
        os.waitpid(pid, 0)
PY
	/usr/bin/python3 "$T_DIR/comm.py" "$UNETCTL" 20261127 >"$T_DIR/comm.out" 2>&1 ||
		{ cat "$T_DIR/comm.out"; fail "unetctl sockets does not print process names escaped"; }
	grep -q "^comm fuzz ok" "$T_DIR/comm.out" || fail "the comm fuzz did not finish"
	note "$(cat "$T_DIR/comm.out")"

	# After exec the file is still there, with the same pid, owner and
	# start time, but unlocked: not believed.  Exited: the file is gone.
	# shellcheck disable=SC2016
	timeout 10 sh -c ': >"$1"' sh "$T_DIR/in1" || fail "holder 1 does not wait on its FIFO"
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(cat "/proc/$pid1/comm" 2>/dev/null) == sleep ]] && break
		sleep 0.1
	done
	((i < 100)) || fail "holder 1 did not exec sleep"
	[[ -e ${alt1[0]} ]] || fail "the file of holder 1 went at exec (the test needs it there)"
	# shellcheck disable=SC2016
	timeout 10 sh -c ': >"$1"' sh "$T_DIR/in2" || fail "holder 2 does not wait on its FIFO"
	unet_bg_wait "$pid2" 10 || fail "holder 2 failed"
	[[ -e /run/unet-run/$pid2 ]] && fail "the file of a process that exited is still there"
	out=$(in_a "$UNETCTL" --json sockets) || fail "unetctl --json sockets failed"
	jq -e --argjson a "$pid1" --argjson b "$pid2" '[.sockets[] | select(.pid == $a or .pid == $b)] | length == 0' \
		<<<"$out" >/dev/null || fail "sockets that are gone are still listed: $out"
	kill "$pid1"
}
