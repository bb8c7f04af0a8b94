# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unet_run_fd.sh - what becomes of U-Net sockets under unet-run when a
# program duplicates its descriptors, forks and execs
# (docs/unet-run.md, "Descriptors").  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unet_run_fork_race|-|240|a C server under unet-run with 8 U-Net TCP connections forks from two threads at once, 40 times each, every child writing its connection's name on each connection it inherited: each connection carries only its own name, then the server's last words and its end; no descriptor is left over (two forks at once mixed their lists of connections to carry: data on the wrong connection, leaked descriptors, connections never closed, a crash in the relay thread); and of two children of one connection whose parent closed its copy, one gets the peer's data (each relay counted as the parent's before); then under ThreadSanitizer (make tsan: fork-relay, unet-run and the preload library; plain pass only), small: the same race (4 connections, 2 threads forking 3 times each) and a pre-fork server whose 3 children poll and accept on copies of a U-Net listener (the first from two threads, one of which forks a child of its own), 6 clients echoed byte for byte, every process exiting cleanly: no report (before, the relay's raw close of a channel, unseen by ThreadSanitizer, was reported racing with the program's next close of that number, and the fork handlers' locks, overwritten in the child rather than released, were reported double-locked at the child's own fork)"
	"unet_run_fork_limits|-|60|the fork relay's bounds flooded under unet-run: a fork with 65 U-Net listeners carries none (each child's copy refuses accept with EOPNOTSUPP, logged); five children keeping copies of 60 listeners each: 256 copies served, the last 44 refuse (logged; before, they were channels dropped at once, accept failing later with EINVAL and a stray errno logged); a child that keeps every connection of 257 clients: 256 are relayed, the 257th waits in the backlog (logged) until the child closes one, then is served (echo)"
	"unet_run_close_busy|-|60|under unet-run, a thread closes a U-Net UDP socket and a TCP connection while another thread is blocked in recv on it: the blocked call ends (its receive timeout) and the process exits cleanly, as with the kernel's sockets (the socket's state lives until the last call on it returns); and poll looks at U-Net sockets another thread closes and reopens under it (400 times) without touching freed memory"
	"unet_run_fd|-|120|under unet-run (native mode): a dup, dup2 and dup3 of a U-Net UDP socket and a dup of a U-Net TCP connection are the same socket after the original is closed (echoes byte for byte); a failed exec leaves them working; across exec an inheritable U-Net socket is a shut-down kernel socket (end of file, EPIPE) and a close-on-exec one is gone, and the new image's own socket gets U-Net (the old endpoint's AF_XDP socket did not survive exec); Python's ForkingTCPServer serves two clients at once: each child serves the connection its parent accepted on U-Net (relayed by the parent, which closed its copy and went on accepting), 300 kB each way byte for byte and getpeername true, while the child's own new socket is the kernel's and its copy of the listener, which it never accepts on, takes none of the parent's connections; a pre-fork server (listener opened, then two os.fork() children accepting on it): 4 clients at once, 100 kB each way byte for byte, served two by each child (the parent's relay hands connections in turn), while a third child floods the relay with false notes on its copy (without the per-turn bound the relay never got past it; it claims the others' connections), after a seeded fuzz of notes and stray bytes from a fourth; a child that exits with a connection handed to it and not accepted loses it to none: the next child that accepts serves it; a child that accepts with no descriptor free gets EMFILE (that connection is closed) and then serves the next (before, it waited for a handover forever); a child that answers four connections and closes them while their peer never closes its side leaves no relay behind (before, the relays waited for the peer's FIN forever, and 256 such held every child off); a descriptor a child passes on its copy of the listener is refused (SO_PASSRIGHTS, Linux 6.16; before, the relay's thread closed it, a lingering socket's close stalling every relay)"
)

# run_fd_setup: what every test here starts with: one XDP mode (native
# unless asked), the namespaces, a attached, and in run_env (the
# caller's local) the env command unet-run's programs run under.
run_fd_setup() {
	T_MODE=${T_MODE:-native}
	# shellcheck disable=SC2207
	run_env=(env $(unet_run_env))
	setup_ns
	attach a
	run_env+=(UNET_PIN_ROOT="$UNET_PIN_ROOT")
}

t_unet_run_fd() {
	local run_env=() pid i before after
	run_fd_setup
	cat >"$T_DIR/peer.py" <<'PY'
import socket, sys, threading
ip = sys.argv[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((ip, 7900))
def udp():
    while True:
        d, a = u.recvfrom(65536)
        u.sendto(d, a)
threading.Thread(target=udp, daemon=True).start()
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((ip, 7902)); ls.listen(8)
print("ready endpoint=0", flush=True)
def serve(c):
    while True:
        d = c.recv(65536)
        if not d: break
        c.sendall(d)
    c.close()
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	cat >"$T_DIR/fdprog.py" <<'PY'
# Under unet-run: dup, dup2, dup3 of U-Net sockets, then exec (a failed
# one, then a real one into fdchild.py).
import errno, os, socket, sys
peer = sys.argv[1]
U, T = (peer, 7900), (peer, 7902)
blob = bytes((i * 151 + 3) % 256 for i in range(200000))

def udp_echo(s, msg):
    s.sendto(msg, U)
    got = s.recv(65536)
    assert got == msg, (got, msg)

def tcp_echo(s, data):
    s.sendall(data)
    got = bytearray()
    while len(got) < len(data):
        d = s.recv(65536)
        assert d, "early EOF"
        got += d
    assert bytes(got) == data

# UDP: dup, close the original, the copy is the same socket.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(10)
u.bind(("0.0.0.0", 7901))
udp_echo(u, b"one")
fd = os.dup(u.fileno())
u.close()
v = socket.socket(fileno=fd); v.settimeout(10)
udp_echo(v, b"two")
# dup2 (inheritable) and dup3 (O_CLOEXEC) onto chosen numbers.
os.dup2(v.fileno(), 40, inheritable=True)
os.dup2(v.fileno(), 41, inheritable=False)
v.close()
w = socket.socket(fileno=40); w.settimeout(10)
udp_echo(w, b"three")
w.detach(); os.close(40)
x = socket.socket(fileno=41); x.settimeout(10)
udp_echo(x, b"four")
assert x.getsockname()[1] == 7901
x.close()
print("udp dup ok", flush=True)

# TCP: the same with a connection, 200 kB byte for byte.
c = socket.create_connection(T, timeout=10)
tcp_echo(c, blob[:1000])
fd = os.dup(c.fileno())
c.close()
d = socket.socket(fileno=fd); d.settimeout(10)
tcp_echo(d, blob)
d.close()
print("tcp dup ok", flush=True)

# exec: u2 and t2 inheritable, k close-on-exec (Python's default).
u2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u2.settimeout(10)
u2.bind(("0.0.0.0", 7903))
udp_echo(u2, b"before exec")
t2 = socket.create_connection(T, timeout=10)
tcp_echo(t2, b"before exec")
k = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); k.settimeout(10)
udp_echo(k, b"cloexec")
u2.set_inheritable(True); t2.set_inheritable(True)
try:
    os.execv("/nonexistent/program", ["x"])
except OSError as e:
    assert e.errno == errno.ENOENT, e
udp_echo(u2, b"after a failed exec")
tcp_echo(t2, b"after a failed exec")
udp_echo(k, b"after a failed exec")
print("failed exec ok", flush=True)
os.execv(sys.executable, [sys.executable, sys.argv[2], str(u2.fileno()), str(t2.fileno()),
                          str(k.fileno()), peer])
PY
	cat >"$T_DIR/fdchild.py" <<'PY'
# The image exec'ed by fdprog.py: inherited U-Net sockets are dead kernel
# sockets (reads: end of file; writes: EPIPE); close-on-exec ones are gone.
import errno, os, socket, sys
u, t, k = (int(a) for a in sys.argv[1:4])
peer = (sys.argv[4], 7900)
try:
    os.fstat(k)
    raise SystemExit("the close-on-exec socket survived exec")
except OSError as e:
    assert e.errno == errno.EBADF, e
for fd, kind in ((u, socket.SOCK_DGRAM), (t, socket.SOCK_STREAM)):
    s = socket.socket(fileno=fd)
    assert s.type == kind, (fd, s.type)
    assert s.recv(100) == b"", fd
    try:
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"x", peer)
        else:
            s.send(b"x")
        raise SystemExit("fd %d: a send after exec succeeded" % fd)
    except OSError as e:
        assert e.errno == errno.EPIPE, (fd, e)
    s.close()
# The new image's own socket gets an endpoint of its own: the old
# image's AF_XDP socket did not outlive exec and hold the queue.
n = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n.bind(("0.0.0.0", 7905))
n.settimeout(10)
n.sendto(b"after exec", peer)
assert n.recv(100) == b"after exec"
print("exec child ok", flush=True)
PY
	cat >"$T_DIR/forkprog.py" <<'PY'
# Under unet-run: Python's forking server (socketserver.ForkingTCPServer):
# the parent accepts, forks a child per connection, closes its copy and
# goes on accepting; each child serves its connection (the parent's
# U-Net connection, relayed for it), while its own new socket is the
# kernel's; its copy of the listener answers getsockname, and as it never
# accepts on it, the parent's relay hands it no connection.
import errno, os, socket, socketserver, sys
peer_udp = (sys.argv[1], 7900)
class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        c = self.request
        k = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); k.settimeout(10)
        k.sendto(b"child via the kernel", peer_udp)
        assert k.recv(100) == b"child via the kernel"
        assert self.server.socket.getsockname()[1] == 7904
        try:
            self.server.socket.getpeername()
            raise SystemExit("child: getpeername on the listener worked")
        except OSError as e:
            assert e.errno == errno.ENOTCONN, e
        # A socket made from the relayed descriptor is the TCP socket it
        # stands for (Python reads family, type and protocol from it),
        # and so is one made from the listener's copy.
        w = socket.socket(fileno=os.dup(c.fileno()))
        assert (w.family, w.type, w.proto) == (socket.AF_INET, socket.SOCK_STREAM,
                                               socket.IPPROTO_TCP), (w.family, w.type, w.proto)
        w.close()
        w = socket.socket(fileno=os.dup(self.server.socket.fileno()))
        assert w.family == socket.AF_INET and w.getsockopt(socket.SOL_SOCKET,
                                                           socket.SO_ACCEPTCONN) == 1
        w.close()
        c.sendall(("hello %s:%d\n" % c.getpeername()).encode())
        total = 0
        while True:
            d = c.recv(65536)
            if not d: break
            c.sendall(d); total += len(d)
        print("child echoed", total, flush=True)
class Server(socketserver.ForkingTCPServer):
    allow_reuse_address = True
srv = Server(("0.0.0.0", 7904), Echo)
print("ready endpoint=0", flush=True)
for _ in range(2):
    srv.handle_request()
srv.server_close()   # waits for the children
print("parent served 2", flush=True)
PY
	cat >"$T_DIR/forkclient.py" <<'PY'
import socket, sys, threading, time
blob = bytes((i * 37 + 11) % 256 for i in range(300000))
errs = []
def client(k):
    try:
        c = socket.create_connection((sys.argv[1], 7904), timeout=20)
        me = "hello %s:%d\n" % c.getsockname()
        c.sendall(blob); c.shutdown(socket.SHUT_WR)
        if k == 1:
            # Read late: the child writes its echo's tail into the
            # relay and exits, and the parent reaps it and exits, while
            # the tail still waits to be sent (the parent's exit must
            # let the relay finish it).
            time.sleep(1)
        got = bytearray()
        while True:
            d = c.recv(65536)
            if not d: break
            got += d
        assert bytes(got) == me.encode() + blob, (k, len(got), bytes(got[:40]))
    except Exception as e:
        errs.append(repr(e))
ts = [threading.Thread(target=client, args=(k,)) for k in range(2)]
for t in ts: t.start()
for t in ts: t.join()
assert not errs, errs
print("fork clients ok", flush=True)
PY
	cat >"$T_DIR/prefork.py" <<'PY'
# Under unet-run: a pre-fork server.  The listener is opened, then
# children accept on it: A and B two connections each, while H, a child
# turned hostile, floods the parent's relay with notes through its copy
# (claims of other children's connections, notes of no kind) and
# accepts nothing; then C, which
# waits for a connection and exits without accepting it, and D, which
# accepts once C is gone.  Each connection: read to its end, answer the
# child's name and what was read.
import errno, os, random, resource, select, signal, socket, struct, sys
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 7906)); ls.listen(16)

def serve(name, n):
    for _ in range(n):
        c, a = ls.accept()
        assert c.getpeername() == a and c.getsockname()[1] == 7906
        got = bytearray()
        while True:
            d = c.recv(65536)
            if not d: break
            got += d
        c.sendall(name + b" " + bytes(got))
        c.close()

def child(name, n, go=None, ready=None):
    pid = os.fork()
    if pid:
        return pid
    try:
        if go is not None:
            os.read(go, 1)
        # Says it accepts (a zero-timeout select) before the clients come.
        select.select([ls], [], [], 0)
        if ready is not None:
            os.write(ready, name)
        if n:
            serve(name, n)
        else:
            select.select([ls], [], [])     # a connection is handed over
            print("C ready: leaves with a connection not accepted", flush=True)
        os._exit(0)
    except BaseException as e:
        print(name, "failed:", repr(e), flush=True)
        os._exit(1)

def hostile():
    pid = os.fork()
    if pid:
        return pid
    # Aligned notes only: "taken" for ids 1 to 8 (the others'
    # connections: a turn of the relay reads all eight),
    # and notes of no kind; never "accepts", so it is handed nothing.
    # A 32 MiB send buffer (SO_SNDBUFFORCE, as root): more notes wait
    # than the relay reads in seconds, so that reading until none is left
    # would never end.
    ls.setsockopt(socket.SOL_SOCKET, 32, 32 << 20)
    junk = b"".join(struct.pack("=II", 2, i % 8 + 1) + struct.pack("=II", 0xffffffff, i)
                    for i in range(4096))
    while True:
        os.write(ls.fileno(), junk)

def fuzz(seed):
    # Seeded junk on its copy, then gone: notes of every kind (accepts
    # with any pid, taken with any id, no kind) and stray bytes between
    # them; whatever the relay made of it, what it was handed (if it
    # seemed to accept) goes to the others when it is gone.
    pid = os.fork()
    if pid:
        return pid
    # A descriptor passed to the relay would be closed in its thread
    # (a lingering socket's close stalls every relay): refused, where
    # the kernel can (SO_PASSRIGHTS, Linux 6.16).
    probe = socket.socketpair()
    try:
        probe[0].setsockopt(socket.SOL_SOCKET, 83, 0)
        can_refuse = True
    except OSError:
        can_refuse = False
    try:
        ls.sendmsg([b"\0" * 8], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                  struct.pack("i", probe[1].fileno()))])
        if can_refuse:
            print("fuzz: the relay took a descriptor", flush=True)
            os._exit(3)
    except PermissionError:
        pass
    rnd = random.Random(seed)
    junk = bytearray()
    for _ in range(1024):
        kind = rnd.choice([1, 2, 2, rnd.getrandbits(32)])
        ident = rnd.choice([rnd.randrange(1, 9), rnd.getrandbits(32)])
        junk += struct.pack("=II", kind, ident)
        if rnd.random() < 0.1:
            junk += rnd.randbytes(rnd.randrange(1, 8))
    os.write(ls.fileno(), bytes(junk))
    os._exit(0)

r, w = os.pipe()
assert os.waitpid(fuzz(int(sys.argv[1])), 0)[1] == 0
h = hostile()
kids = [child(b"A", 2, ready=w), child(b"B", 2, ready=w)]
os.read(r, 1); os.read(r, 1)
print("ready endpoint=0", flush=True)
for k in kids:
    assert os.waitpid(k, 0)[1] == 0
os.kill(h, signal.SIGKILL)
os.waitpid(h, 0)
go_r, go_w = os.pipe()
c = child(b"C", 0, ready=w)
d = child(b"D", 1, go=go_r)
os.read(r, 1)
print("C accepts, pid", c, flush=True)
assert os.waitpid(c, 0)[1] == 0
os.write(go_w, b"x")
assert os.waitpid(d, 0)[1] == 0

# E has no descriptor free when it accepts: EMFILE (the connection
# handed to it is closed), then with descriptors again it accepts the
# next one.
def child_e():
    pid = os.fork()
    if pid:
        return pid
    try:
        select.select([ls], [], [], 0)
        os.write(w, b"E")
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        free = os.dup(0); os.close(free)
        resource.setrlimit(resource.RLIMIT_NOFILE, (free, hard))
        try:
            ls.accept()
            raise SystemExit("E: accept with no descriptor free worked")
        except OSError as e:
            assert e.errno == errno.EMFILE, e
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        print("E: EMFILE", flush=True)
        serve(b"E", 1)
        os._exit(0)
    except BaseException as e:
        print("E failed:", repr(e), flush=True)
        os._exit(1)
e = child_e()
os.read(r, 1)
print("E accepts", flush=True)
assert os.waitpid(e, 0)[1] == 0

# F answers four connections and closes them, whose peer never closes
# its side: the relays end with F's close (the connections are the
# layer's orphans), not with a FIN the peer never sends (a peer that
# held them all would have stopped every child from being handed any).
import time
base = len(os.listdir("/proc/self/fd"))
def child_f():
    pid = os.fork()
    if pid:
        return pid
    select.select([ls], [], [], 0)
    os.write(w, b"F")
    for _ in range(4):
        c, _ = ls.accept()
        c.sendall(b"F")
        c.close()
    os._exit(0)
f = child_f()
os.read(r, 1)
print("F accepts", flush=True)
assert os.waitpid(f, 0)[1] == 0
for _ in range(100):
    if len(os.listdir("/proc/self/fd")) <= base:
        break
    time.sleep(0.05)
print("relays left after F:", max(0, len(os.listdir("/proc/self/fd")) - base), flush=True)
print("pre-fork done", flush=True)
PY
	cat >"$T_DIR/preclient.py" <<'PY'
import socket, sys, threading
n = int(sys.argv[2])
names, errs = [], []
def client(k):
    try:
        blob = bytes((i * 31 + k) % 256 for i in range(100000))
        c = socket.create_connection((sys.argv[1], 7906), timeout=20)
        c.sendall(blob); c.shutdown(socket.SHUT_WR)
        got = bytearray()
        while True:
            d = c.recv(65536)
            if not d: break
            got += d
        assert got[2:] == blob and got[1:2] == b" ", (k, len(got), bytes(got[:8]))
        names.append(got[:1].decode())
    except Exception as e:
        errs.append(repr(e))
ts = [threading.Thread(target=client, args=(k,)) for k in range(n)]
for t in ts: t.start()
for t in ts: t.join()
assert not errs, errs
print("served by", " ".join(sorted(names)), flush=True)
PY
	unet_bg_b /usr/bin/python3 "$T_DIR/peer.py" "$IP_B" >"$T_DIR/peer.out" 2>&1
	pid=$UNET_BG_PID
	T_CLEANUP+=("kill $pid")
	wait_ready "$T_DIR/peer.out" "$pid" >/dev/null

	# dup and exec.
	in_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/fd.log" \
		/usr/bin/python3 "$T_DIR/fdprog.py" "$IP_B" "$T_DIR/fdchild.py" >"$T_DIR/fd.out" 2>&1
	local rc=$?
	cat "$T_DIR/fd.out" "$T_DIR/fd.log"
	((rc == 0)) || fail "the dup/exec program failed (exit $rc)"
	[[ $(cat "$T_DIR/fd.out") == $'udp dup ok\ntcp dup ok\nfailed exec ok\nexec child ok' ]] ||
		fail "the dup/exec program did not finish every step"
	# The UDP socket on 7901 went to U-Net once and was closed once, with
	# its four echoes counted on U-Net (the dups shared it).
	grep -q "udp bind 0\.0\.0\.0:7901: U-Net" "$T_DIR/fd.log" || fail "the UDP socket was not on U-Net"
	grep -q "udp socket closed: 4 datagrams received, 4 sent over U-Net" "$T_DIR/fd.log" ||
		fail "the dups of the UDP socket did not carry its four datagrams over U-Net"
	grep -q "tcp socket closed: 201000 bytes received, 201000 sent over U-Net" "$T_DIR/fd.log" ||
		fail "the dup of the TCP connection did not carry 201000 bytes over U-Net"
	[[ $(grep -c "exec: a shut-down kernel socket in the new image" "$T_DIR/fd.log") == 4 ]] ||
		fail "not two inheritable U-Net sockets replaced at each of the two execs"
	grep -q "exec failed: 2 U-Net sockets put back" "$T_DIR/fd.log" || fail "the failed exec did not put the sockets back"
	grep -q "udp bind 0\.0\.0\.0:7905: U-Net" "$T_DIR/fd.log" ||
		fail "a socket of the exec'ed image was not on U-Net (the old image's endpoint held the queue)"

	# fork.
	unet_bg_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/fork.log" \
		/usr/bin/python3 "$T_DIR/forkprog.py" "$IP_B" >"$T_DIR/fork.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/fork.out" "$pid" >/dev/null
	in_b /usr/bin/python3 "$T_DIR/forkclient.py" "$IP_A" >"$T_DIR/forkclient.out" 2>&1 ||
		{ cat "$T_DIR/forkclient.out" "$T_DIR/fork.out" "$T_DIR/fork.log"; fail "the forking server's client failed"; }
	finish "$pid" "$T_DIR/fork.out" 30 "forking server under unet-run"
	cat "$T_DIR/fork.log"
	[[ $(grep -c "^child echoed 300000$" "$T_DIR/fork.out") == 2 ]] || fail "the children did not each serve a connection"
	grep -qx "parent served 2" "$T_DIR/fork.out" || fail "the parent did not go on serving"
	[[ $(grep -c "tcp accepted on fd [0-9]* from $IP_B:[0-9]*: U-Net" "$T_DIR/fork.log") == 2 ]] ||
		fail "the connections were not on U-Net"
	[[ $(grep -c "the parent's connection, relayed for this child" "$T_DIR/fork.log") -ge 2 ]] ||
		fail "the connections were not relayed for the children"
	grep -q "udp sendto $IP_B:7900: kernel (the endpoint is the parent process's)" "$T_DIR/fork.log" ||
		fail "a child's own socket did not go to the kernel"
	[[ $(grep -c "tcp socket closed: 300000 bytes received, 3000[0-9][0-9] sent over U-Net" "$T_DIR/fork.log") == 2 ]] ||
		fail "the connections did not carry 300000 bytes in (and the greeting and 300000 out) over U-Net"
	grep -q "handed to child" "$T_DIR/fork.log" && fail "a connection went to a child that never accepted"

	# pre-fork.
	before=$(kernel_tcp_segs a)
	unet_bg_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/prefork.log" \
		/usr/bin/python3 "$T_DIR/prefork.py" 20261127 >"$T_DIR/prefork.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/prefork.out" "$pid" >/dev/null
	in_b /usr/bin/python3 "$T_DIR/preclient.py" "$IP_A" 4 >"$T_DIR/preclient.out" 2>&1 ||
		{ cat "$T_DIR/preclient.out" "$T_DIR/prefork.out" "$T_DIR/prefork.log"; fail "the pre-fork server's clients failed"; }
	cat "$T_DIR/preclient.out"
	grep -qx "served by A A B B" "$T_DIR/preclient.out" || fail "the two children did not serve two connections each"
	# A child (C) gets a connection and exits without accepting it; the
	# next child (D) accepts and serves it.
	for ((i = 0; i < 200; i++)); do
		grep -q "^C accepts" "$T_DIR/prefork.out" && break
		sleep 0.05
	done
	((i < 200)) || { cat "$T_DIR/prefork.out"; fail "the child C did not start accepting"; }
	in_b /usr/bin/python3 "$T_DIR/preclient.py" "$IP_A" 1 >"$T_DIR/preclient2.out" 2>&1 ||
		{ cat "$T_DIR/preclient2.out" "$T_DIR/prefork.out" "$T_DIR/prefork.log"; fail "the connection handed to the child that left was lost"; }
	cat "$T_DIR/preclient2.out"
	grep -qx "served by D" "$T_DIR/preclient2.out" || fail "the connection C left was not served by D"
	# E accepts with no descriptor free: EMFILE, and that connection is
	# closed; then it serves the next.
	for ((i = 0; i < 200; i++)); do
		grep -q "^E accepts" "$T_DIR/prefork.out" && break
		sleep 0.05
	done
	((i < 200)) || { cat "$T_DIR/prefork.out"; fail "the child E did not start accepting"; }
	in_b /usr/bin/python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 7906), timeout=20)
try:
    assert c.recv(100) == b""
except ConnectionResetError:
    pass
print("closed without an answer")
' "$IP_A" >"$T_DIR/preclient3.out" 2>&1 ||
		{ cat "$T_DIR/preclient3.out" "$T_DIR/prefork.out"; fail "the connection E had no descriptor for was not closed"; }
	in_b /usr/bin/python3 "$T_DIR/preclient.py" "$IP_A" 1 >"$T_DIR/preclient4.out" 2>&1 ||
		{ cat "$T_DIR/preclient4.out" "$T_DIR/prefork.out" "$T_DIR/prefork.log"; fail "E did not serve after EMFILE"; }
	grep -qx "served by E" "$T_DIR/preclient4.out" || fail "the connection after EMFILE was not served by E"
	wait_log 10 "$T_DIR/prefork.out" "^F accepts"
	# Four connections F answers and closes; this peer never closes its
	# side (it holds them until the server is done, 15 s at most).
	unet_bg_b /usr/bin/python3 -c '
import socket, sys, time
cs = [socket.create_connection((sys.argv[1], 7906), timeout=10) for _ in range(4)]
for c in cs:
    assert c.recv(10) == b"F" and c.recv(10) == b""
print("held 4", flush=True)
time.sleep(15)
' "$IP_A" >"$T_DIR/halfclient.out" 2>&1
	local half=$UNET_BG_PID
	finish "$pid" "$T_DIR/prefork.out" 30 "pre-fork server under unet-run"
	kill "$half" 2>/dev/null
	grep -qx "held 4" "$T_DIR/halfclient.out" || { cat "$T_DIR/halfclient.out"; fail "F did not answer and close the four connections"; }
	grep -qx "relays left after F: 0" "$T_DIR/prefork.out" ||
		fail "the relays of F's closed connections stayed while their peer held its side ($(grep '^relays left' "$T_DIR/prefork.out"))"
	cat "$T_DIR/prefork.log"
	# Every connection ended before the parent did: its exit has nothing
	# to wait for (the hostile child's channel, full of notes when it was
	# killed, is no connection; the exit waited 5 s for it before)
	grep -q "relayed connection(s) of exited children not finished" "$T_DIR/prefork.log" &&
		fail "the parent's exit waited for relays: $(grep 'not finished' "$T_DIR/prefork.log")"
	grep -q "child $(sed -n 's/^C accepts, pid //p' "$T_DIR/prefork.out") closed its copy with 1 connection it had not accepted" "$T_DIR/prefork.log" ||
		fail "C did not leave a connection it had been handed"
	[[ $(grep -c "tcp accepted on fd [0-9]* from $IP_B:[0-9]*: U-Net, relayed by the parent" "$T_DIR/prefork.log") == 10 ]] ||
		fail "not 10 connections accepted by the children on U-Net (A, B, D, E and F's four)"
	after=$(kernel_tcp_segs a)
	kernel_tcp_quiet "$before" "$after"
}

t_unet_run_close_busy() {
	local run_env=() pid
	run_fd_setup
	unet_bg_b /usr/bin/python3 -c '
import socket, sys
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], 7910)); ls.listen(1)
print("ready endpoint=0", flush=True)
c, _ = ls.accept()
c.settimeout(20)
try:
    c.recv(10)
except OSError:
    pass
' "$IP_B" >"$T_DIR/peer.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/peer.out" "$pid" >/dev/null
	in_a "${run_env[@]}" "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/busy.log" /usr/bin/python3 -c '
import os, socket, struct, sys, threading, time
def blocked(s, what):
    try:
        s.recv(100)
        print(what, "recv returned data")
    except OSError as e:
        print(what, "recv ended:", e.__class__.__name__, flush=True)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((sys.argv[1], 7911))
t = socket.create_connection((sys.argv[2], 7910), timeout=10)
for s in (u, t):
    s.settimeout(None)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 1, 0))
for s, what in ((u, "udp"), (t, "tcp")):
    th = threading.Thread(target=blocked, args=(s, what))
    th.start()
    time.sleep(0.3)  # the reader is in recv (a blocked call, not a timing check)
    os.close(s.fileno())  # the descriptor, under the blocked reader
    th.join(10)
    s.detach()
# poll in one thread while another closes and reopens U-Net sockets
# under it: each look holds the socket it looks at.
import select
stop = []
def churn():
    # Port 0: a socket that a look still holds keeps its port until the
    # look ends (as the kernel keeps a file a poll holds), so a rebind
    # of one fixed port may find it in use.
    try:
        for i in range(400):
            x = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            x.bind((sys.argv[1], 0))
            polled.append(x.fileno())
            x.close()
            churned.append(1)
    finally:
        stop.append(1)
polled = [os.dup(1)]
churned = []
ch = threading.Thread(target=churn)
ch.start()
looks = 0
while not stop:
    p = select.poll()
    p.register(polled[-1], select.POLLIN)
    p.poll(0)
    looks += 1
ch.join()
print("polled", looks, "churned", len(churned), flush=True)
print("done", flush=True)
' "$IP_A" "$IP_B" >"$T_DIR/busy.out" 2>&1
	local rc=$?
	cat "$T_DIR/busy.out" "$T_DIR/busy.log"
	((rc == 0)) || fail "the program crashed (exit $rc) after closing sockets other threads were blocked on"
	grep -qx "done" "$T_DIR/busy.out" || fail "the program did not finish"
	grep -qE "^polled [0-9]+ churned 400$" "$T_DIR/busy.out" ||
		fail "the closing thread did not open and close its 400 sockets"
	[[ $(grep -c "udp bind $IP_A:0: U-Net" "$T_DIR/busy.log") == 400 ]] ||
		fail "the 400 sockets polled under the closing thread were not all on U-Net"
	grep -q "udp bind $IP_A:7911: U-Net" "$T_DIR/busy.log" || fail "the UDP socket was not on U-Net"
	grep -q "tcp connect $IP_B:7910: U-Net" "$T_DIR/busy.log" || fail "the TCP connection was not on U-Net"
	kill "$pid" 2>/dev/null; unet_bg_wait "$pid" 5 || true
}

# race_clients PORT N: N kernel clients of fork-relay race on PORT from
# b; each connection must carry only its own "fdN;" (one N, from the
# children's writes) and then "end;" and its end of stream.  Prints
# "clients done, bad B".
race_clients() {
	in_b /usr/bin/python3 - "$IP_A" "$1" "$2" <<'PY'
import re, socket, sys
cs = [socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
      for _ in range(int(sys.argv[3]))]
bad = 0
for k, c in enumerate(cs):
    got = b""
    while True:
        d = c.recv(65536)
        if not d:
            break
        got += d
    names = set(re.findall(rb"fd(\d+);", got))
    if len(names) > 1 or not got.endswith(b"end;"):
        bad += 1
        print("connection", k, "carried", sorted(names), got[-12:])
print("clients done, bad", bad)
PY
}

# race_check OUT CLIENTS_OUT: fork-relay race's verdicts.
race_check() {
	grep -qx "clients done, bad 0" <<<"$2" || fail "a connection carried another's data or lost its end"
	[[ $(grep '^fds ' "$1") =~ fds\ ([0-9]+)\ ([0-9]+) ]] || fail "no descriptor count"
	((BASH_REMATCH[2] <= BASH_REMATCH[1])) || fail "descriptors left over after the forks: ${BASH_REMATCH[0]}"
}

t_unet_run_fork_race() {
	local run_env=() pid out
	run_fd_setup
	unet_bg_a "${run_env[@]}" timeout 40 "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/race.log" \
		"$BUILD/tools/fork-relay" race "$IP_A" 7930 8 2 40 >"$T_DIR/race.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/race.out" "$pid" >/dev/null
	out=$(race_clients 7930 8) || fail "the kernel clients failed: $out"
	note "$out"
	unet_bg_wait "$pid" 20 || { cat "$T_DIR/race.out" "$T_DIR/race.log"; fail "the forking server failed"; }
	cat "$T_DIR/race.out"
	race_check "$T_DIR/race.out" "$out"

	# Two children of one connection, the parent's copy closed: the data
	# is theirs (one of them gets it).
	unet_bg_a "${run_env[@]}" timeout 20 "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/twice.log" \
		"$BUILD/tools/fork-relay" twice "$IP_A" 7931 >"$T_DIR/twice.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/twice.out" "$pid" >/dev/null
	# The data goes once the parent has said it closed its copy; then
	# the client closes (the child that does not get the data reads the
	# end instead of waiting out its 2 s).
	in_b /usr/bin/python3 -c '
import socket, sys, time
c = socket.create_connection((sys.argv[1], 7931), timeout=10)
for _ in range(200):
    with open(sys.argv[2]) as f:
        if "parent closed its copy" in f.read():
            break
    time.sleep(0.05)
else:
    sys.exit("the parent did not close its copy in 10 s")
c.sendall(b"hello twice"); c.close()
' "$IP_A" "$T_DIR/twice.out" || fail "the twice client failed"
	unet_bg_wait "$pid" 10
	cat "$T_DIR/twice.out"
	grep -q "^child [01]: 11 bytes" "$T_DIR/twice.out" ||
		{ cat "$T_DIR/twice.log"; fail "neither child got the data once the parent closed its copy"; }

	fork_race_tsan
}

# The fork paths under ThreadSanitizer (make tsan: fork-relay, unet-run
# and the preload library), small: the race above (two threads forking
# with connections open, the parent's relay thread carrying them), and
# a pre-fork server whose children accept on copies of a U-Net listener
# (the relay thread accepting and handing connections over; the first
# child, forked while the parent had one thread, accepting from two
# threads, one of which forks: the fork handlers' locks in a child).  A report fails the run (halt_on_error: the reporting
# process exits 66 at once).  TSan watches a child of fork whole only if
# its parent had one thread then: in a child of a multi-threaded parent
# it ignores every access (and dies if that child starts a thread,
# die_after_fork), so only the first pre-fork child starts threads.
# tsan_verdict OUT WHAT: fails, showing the report, if a process of the
# run reported (a report kills it: its peers wait for nothing).
tsan_verdict() {
	grep -q "ThreadSanitizer" "$1" || return 0
	cat "$1"
	fail "ThreadSanitizer reported ($2)"
}

# tsan_relay_start NAME MODE PORT ARGS...: the ThreadSanitizer build's
# fork-relay MODE under its unet-run on a, serving on PORT (output in
# $T_DIR/NAME.out, unet-run's log in NAME.log), once ready; its pid in
# UNET_BG_PID.  Run from fork_race_tsan (its tsan_env).
tsan_relay_start() {
	local name=$1 mode=$2
	shift 2
	unet_bg_a "${tsan_env[@]}" timeout 40 "$TSAN_COPY/unet-run" --iface "$IF_A" --log "$T_DIR/$name.log" \
		"$TSAN_COPY/tools/fork-relay" "$mode" "$IP_A" "$@" >"$T_DIR/$name.out" 2>&1
	wait_ready "$T_DIR/$name.out" "$UNET_BG_PID" >/dev/null
}

# tsan_relay_finish NAME PID WHAT SERVER: waits for it; fails if
# ThreadSanitizer reported (WHAT) or the server (SERVER) did not exit 0.
tsan_relay_finish() {
	local rc
	unet_bg_wait "$2" 20
	rc=$?
	cat "$T_DIR/$1.out"
	tsan_verdict "$T_DIR/$1.out" "$3"
	((rc == 0)) || { cat "$T_DIR/$1.log"; fail "the $4 (ThreadSanitizer) exited $rc"; }
}

fork_race_tsan() {
	local pid out
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		note "the ThreadSanitizer half runs in the plain pass"
		return 0
	fi
	make_tsan
	tsan_copy fork-relay
	local tsan_env=(env UNET_PIN_ROOT="$UNET_PIN_ROOT"
		TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1")

	tsan_relay_start race-tsan race 7932 4 2 3
	pid=$UNET_BG_PID
	out=$(race_clients 7932 4) || {
		tsan_verdict "$T_DIR/race-tsan.out" "fork race"
		fail "the kernel clients failed (ThreadSanitizer): $out"
	}
	note "$out"
	tsan_relay_finish race-tsan "$pid" "fork race" "forking server"
	race_check "$T_DIR/race-tsan.out" "$out"

	tsan_relay_start prefork-tsan prefork 7933 3 6
	pid=$UNET_BG_PID
	out=$(in_b /usr/bin/python3 - "$IP_A" 7933 6 <<'PY'
import socket, sys, threading
ip, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = []
def client(k):
    blob = bytes((i * 37 + k) % 251 for i in range(20000))
    c = socket.create_connection((ip, port), timeout=30)
    c.sendall(blob)
    c.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        d = c.recv(65536)
        if not d:
            break
        got += d
    if got != blob:
        bad.append(k)
ts = [threading.Thread(target=client, args=(k,)) for k in range(n)]
for t in ts: t.start()
for t in ts: t.join()
print("echoed", n - len(bad), "of", n)
PY
	) || {
		tsan_verdict "$T_DIR/prefork-tsan.out" "pre-fork listener"
		fail "the pre-fork clients failed (ThreadSanitizer): $out"
	}
	note "$out"
	tsan_relay_finish prefork-tsan "$pid" "pre-fork listener" "pre-fork server"
	grep -qx "echoed 6 of 6" <<<"$out" || fail "a pre-fork child's echo was not byte for byte"
	grep -q "^served 6 " "$T_DIR/prefork-tsan.out" || fail "the pre-fork server did not count 6 connections served"
}

# The relay's bounds, flooded (docs/unet-run.md, "Descriptors"): a fork
# with more U-Net connections and listeners than one fork carries, more
# children's copies of listeners than the relay serves, and a child that
# keeps more connections than the relay carries for children.  Each
# gets the documented result and its log line, nothing is lost.
t_unet_run_fork_limits() {
	local run_env=() pid out
	run_fd_setup
	# 65 listeners, one fork: none is carried, every copy refuses.
	in_a "${run_env[@]}" timeout 20 "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/many65.log" \
		"$BUILD/tools/fork-relay" many "$IP_A" 7950 65 1 >"$T_DIR/many65.out" 2>&1 ||
		{ cat "$T_DIR/many65.out"; fail "fork-relay many (65 listeners) failed"; }
	cat "$T_DIR/many65.out"
	grep -qx "child 0: carried 0 refused 65 other 0" "$T_DIR/many65.out" ||
		fail "a fork with 65 U-Net listeners: the child's copies did not all refuse (EOPNOTSUPP)"
	grep -q "fork with more than 64 U-Net connections and listeners: none is carried" "$T_DIR/many65.log" ||
		{ cat "$T_DIR/many65.log"; fail "no log line for the fork past 64"; }
	# 60 listeners, five children keeping their copies: 4 * 60 + 16 = 256
	# served, the last 44 copies refuse (before, they were channels the
	# relay dropped at once: accept failed with EINVAL later, and the log
	# gave a stray errno).
	in_a "${run_env[@]}" timeout 20 "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/many60.log" \
		"$BUILD/tools/fork-relay" many "$IP_A" 7950 60 5 >"$T_DIR/many60.out" 2>&1 ||
		{ cat "$T_DIR/many60.out"; fail "fork-relay many (60 listeners, 5 forks) failed"; }
	cat "$T_DIR/many60.out"
	[[ $(grep -c "^child [0-3]: carried 60 refused 0 other 0$" "$T_DIR/many60.out") == 4 ]] ||
		fail "the first four children's 240 copies were not all served"
	grep -qx "child 4: carried 16 refused 44 other 0" "$T_DIR/many60.out" ||
		fail "past 256 copies served, the fifth child's copies did not refuse (EOPNOTSUPP) exactly"
	grep -q "fork: 44 U-Net listeners not served for the child: 256 children's copies are served already" \
		"$T_DIR/many60.log" || { cat "$T_DIR/many60.log"; fail "no log line for the copies past 256"; }
	! grep -q "no relay for the child" "$T_DIR/many60.log" || fail "a copy was made and then dropped"

	# A child keeps every connection: 257 clients; 256 are relayed, the
	# next waits (logged) until the child closes one, then is served.
	unet_bg_a "${run_env[@]}" timeout 40 "$BUILD/unet-run" --iface "$IF_A" --log "$T_DIR/hoard.log" \
		"$BUILD/tools/fork-relay" hoard "$IP_A" 7951 257 >"$T_DIR/hoard.out" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/hoard.out" "$pid" >/dev/null
	out=$(in_b /usr/bin/python3 - "$IP_A" 7951 "$T_DIR/hoard.out" "$T_DIR/hoard.log" <<'PY'
import socket, sys, time
ip, port, out, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def has(path, text):
    with open(path) as f:
        return text in f.read()
def wait(cond, what):
    for _ in range(400):  # 20 s at most
        if cond():
            return
        time.sleep(0.05)
    sys.exit("timed out waiting for " + what)
cs = [socket.create_connection((ip, port), timeout=20) for _ in range(257)]
wait(lambda: has(out, "accepted 256\n") and has(log, "256 connections accepted for children are relayed, the most"),
     "256 connections relayed and the log line")
print("257th waiting" if not has(out, "accepted 257\n") else "257th accepted past the bound")
cs[0].close()  # the child closes its copy: room for the next
wait(lambda: has(out, "accepted 257\n"), "the 257th accepted")
cs[-1].sendall(b"ping")
print("257th echo", cs[-1].recv(4).decode())
for c in cs[1:]:
    c.close()
PY
	) || fail "the hoarding clients failed: $out"
	note "$out"
	unet_bg_wait "$pid" 20 || { tail -5 "$T_DIR/hoard.out"; fail "the hoarding server failed"; }
	grep -qx "257th waiting" <<<"$out" || fail "the 257th connection was not held back at the bound"
	grep -qx "257th echo ping" <<<"$out" || fail "the 257th connection was not served once a slot freed"
}
