#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""unetd-attack.py - a hostile local user against unetd's socket.

  unetd-attack.py --socket PATH --uid UID [--groups G,G,..] ATTACK [options]

Started as root; each attack runs in a child that takes UID (and GROUPS,
else none) before it connects, so the daemon sees that user (SO_PEERCRED
and SO_PEERGROUPS are the connecting process's).  Root's part is only
what the test needs to be deterministic (stopping the daemon so that
events land in one batch).  Speaks lib/proto/unetd_proto.h itself.

Attacks (each prints "ok ..." and exits 0 when the daemon did right):

  race-hangup --daemon-pid PID [--rounds N]
      A WHOAMI on one connection and hang-ups of eight others, all in one
      batch of the daemon's events (the daemon is stopped while they are
      made): the WHOAMI reaps the closed clients, and the batch still
      holds their hang-up events.  Every WHOAMI must be answered.
  close-blocks [--hold S]
      A TCP socket whose close blocks (unsent data to a peer that does not
      read, SO_LINGER of an hour), sent with a HELLO; then another
      connection's WHOAMI must be answered within 5 s.
  netns-fd --netns PATH --iface NAME [--setuid PROG]
      EP_CREATE with the network namespace at PATH (a file every user can
      open, such as /run/netns/NAME).  Prints the daemon's answer:
      "refused ERRNO MSG" or "granted KIND".  With --setuid, the process
      that connected execs PROG (setuid root: its pid then has root's
      capabilities) and a child that kept the connection asks.
  groups --iface NAME
      WHOAMI: prints "ngids N allowed A" as the daemon saw them.
  status
      STATUS: prints "clients N endpoints N listed N", "throttled N" and
      two lines per endpoint listed: "ep UID PID IFNAME", "share UID SHARE".
  grant-linger --iface NAME
      A direct grant whose connection closes while its process keeps the
      granted socket: prints the daemon's WHOAMI charge then ("held E
      BYTES"), the answer to another direct EP_CREATE ("second ..."), and,
      after the socket is closed, to a third ("third ...").
  fake-daemon --count N
      Listen at --socket as the user (not root) and answer N HELLOs as
      unetd would: a client must refuse a daemon that is not root.
  whoami-flood --count N [--per M]
      N WHOAMI requests back to back on one connection (a new one every M
      requests with --per): prints how many
      were answered, how many refused with EAGAIN, and how long they took.
  ep-create --iface NAME
      EP_CREATE of an emulated endpoint on NAME, any bytes (a newline
      too): prints the daemon's answer, "refused ERRNO MSG" or "granted
      KIND".
  ep-cycle --iface NAME [--seconds S] [--count N]
      Create and destroy an emulated endpoint on NAME, on one connection,
      for S seconds: prints "cycled N".
  netns-hold --netns P,P,... --iface NAME[,NAME...] [--hold S]
      An emulated endpoint on each interface named in each namespace
      listed, on one connection; prints "held N pid PID" (the process to
      SIGKILL) and holds them S seconds (30 by default).
  recreate --netns P --iface NAME [--rounds N] [--hold S]
      N times: an emulated endpoint in namespace P, hang up, another at
      once on a new connection; prints "recreated N pid PID" and holds
      the last one S seconds (30 by default).
  status-ping [--seconds S]
      STATUS every 2 ms on one connection for S seconds: prints "pings N
      worst W ms", W the longest round trip.
"""
import argparse
import array
import errno
import os
import select
import signal
import socket
import struct
import sys
import time

VERSION = 1
REQ_HELLO, REQ_EP_CREATE, REQ_EP_DESTROY, REQ_CH_OPEN, REQ_CH_CLOSE, REQ_STATUS, \
    REQ_WHOAMI, REQ_UDP_OPEN, REQ_UDP_CLOSE = range(1, 10)
REQ_HDR = struct.Struct("=HHIII")
REP_HDR = struct.Struct("=HHIIi96s")
KIND_NAMES = {0: "auto", 1: "direct", 2: "emulated"}


def request(typ, body=b"", seq=1):
    return REQ_HDR.pack(VERSION, typ, len(body), seq, 0) + body


def whoami_body(ifname=""):
    return struct.pack("=16s", ifname.encode())


def recv_reply(s, timeout=5.0):
    """The reply (err, msg, body, fds), or None on timeout or hang-up."""
    r, _, _ = select.select([s], [], [], timeout)
    if not r:
        return None
    fds = array.array("i")
    try:
        data, anc, _flags, _addr = s.recvmsg(8192, socket.CMSG_SPACE(16 * fds.itemsize))
    except ConnectionError:
        return None
    for level, typ, cdata in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
    if len(data) < REP_HDR.size:
        return None
    _v, _t, _l, _seq, err, msg = REP_HDR.unpack_from(data)
    return err, msg.split(b"\0", 1)[0].decode(errors="replace"), data[REP_HDR.size:], list(fds)


def ask(path, typ, body=b""):
    """One request on a fresh connection: the reply's body, or None (said why)."""
    s = connect(path)
    s.send(request(typ, body))
    rep = recv_reply(s)
    s.close()
    if rep is None or rep[0]:
        print("no answer: %s" % (rep,))
        return None
    return rep[2]


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    return s


def become(uid, groups):
    os.setgroups(groups)
    os.setgid(uid)
    os.setuid(uid)


def in_child(args, fn):
    """Run fn() in a child as the attacking user; its exit status is ours."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            become(args.uid, args.groups)
            code = fn()
        except Exception as e:  # report, never a traceback for a refusal
            print("error: %s" % e, file=sys.stderr)
        sys.stdout.flush()
        os._exit(code)
    _, st = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(st)


def race_hangup(args):
    """The daemon is stopped while the child makes one batch of events."""
    rd, wr = os.pipe()     # child -> parent: "stop it now", "continue it"
    rd2, wr2 = os.pipe()   # parent -> child: "stopped", "continued"

    def child():
        answered = 0
        for r in range(args.rounds):
            a = connect(args.socket)
            others = [connect(args.socket) for _ in range(8)]
            # Accepted before the batch: let the daemon see them.
            a.send(request(REQ_HELLO, struct.pack("=II", VERSION, 0)))
            if recv_reply(a) is None:
                print("no answer to HELLO in round %d" % r)
                return 1
            os.write(wr, b"s")
            os.read(rd2, 1)        # the daemon is stopped
            a.send(request(REQ_WHOAMI, whoami_body(), seq=2))
            for o in others:       # after the request: later in the batch
                o.close()
            time.sleep(0.02)
            os.write(wr, b"c")
            os.read(rd2, 1)        # the daemon runs again
            rep = recv_reply(a)
            if rep is None or rep[0] != 0:
                print("round %d: WHOAMI not answered (%s)" % (r, rep))
                return 1
            answered += 1
            a.close()
        print("ok race-hangup: %d of %d WHOAMI answered" % (answered, args.rounds))
        return 0

    pid = os.fork()
    if pid == 0:
        os.close(rd)
        os.close(wr2)
        code = 1
        try:
            become(args.uid, args.groups)
            code = child()
        except Exception as e:
            print("error: %s" % e, file=sys.stderr)
        sys.stdout.flush()
        os._exit(code)
    os.close(wr)
    os.close(rd2)
    while True:
        c = os.read(rd, 1)
        if not c:
            break
        try:
            os.kill(args.daemon_pid, signal.SIGSTOP if c == b"s" else signal.SIGCONT)
        except ProcessLookupError:
            pass
        os.write(wr2, b"k")
    if alive(args.daemon_pid):
        os.kill(args.daemon_pid, signal.SIGCONT)
    _, st = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(st)


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def close_blocks(args):
    def child():
        # A loopback TCP connection whose peer never reads: the sender's
        # unsent data cannot leave, so a lingering close waits.
        lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        lst.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        lst.bind(("127.0.0.1", 0))
        lst.listen(1)
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.connect(lst.getsockname())
        t.setblocking(False)
        sent = 0
        chunk = b"x" * 65536
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                sent += t.send(chunk)
            except BlockingIOError:
                break
        t.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 3600))
        s = connect(args.socket)
        s.sendmsg([request(REQ_HELLO, struct.pack("=II", VERSION, 0))],
                  [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [t.fileno()]))])
        t.close()  # the daemon's copy is the last one now
        time.sleep(0.2)
        start = time.monotonic()
        other = connect(args.socket)
        other.send(request(REQ_WHOAMI, whoami_body()))
        rep = recv_reply(other, 5.0)
        took = time.monotonic() - start
        if rep is None:
            print("another client's WHOAMI got no answer in %.1f s (%d bytes unsent)" % (took, sent))
            return 1
        print("ok close-blocks: %d bytes unsent, another client answered in %.3f s" % (sent, took))
        time.sleep(args.hold)
        lst.close()
        return 0
    return in_child(args, child)


def ep_create_in(s, iface, nsfd):
    """An emulated EP_CREATE on s naming the namespace nsfd: the answer as
    "refused ERRNO MSG", "granted KIND" or "no answer"."""
    body = struct.pack("=16sIIII", iface.encode(), 2, 0, 0, 0)
    s.sendmsg([request(REQ_EP_CREATE, body)],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [nsfd]))])
    rep = recv_reply(s)
    if rep is None:
        return "no answer"
    if rep[0]:
        return "refused %s %s" % (errno.errorcode.get(-rep[0], str(-rep[0])), rep[1])
    return "granted %s" % KIND_NAMES.get(struct.unpack_from("=II", rep[2])[1], "?")


def euid_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return int(line.split()[2])
    return -1


def netns_setuid(args, fd):
    """The connecting process execs a setuid-root program (its pid then
    shows root's capabilities); a child that kept the connection asks."""
    become(args.uid, args.groups)
    s = connect(args.socket)
    s.set_inheritable(True)
    r, w = os.pipe()  # the setuid program's stdin, never written: it waits
    me = os.getpid()
    kid = os.fork()
    if kid == 0:
        os.close(r)
        for _ in range(500):
            try:
                if euid_of(me) == 0:
                    break
            except OSError:
                pass
            time.sleep(0.01)
        os.kill(me, signal.SIGSTOP)  # same real uid: allowed
        print(ep_create_in(s, args.iface, fd))
        sys.stdout.flush()
        os.kill(me, signal.SIGKILL)
        os._exit(0)
    os.dup2(r, 0)
    os.close(w)
    os.execv(args.setuid, [args.setuid])


def netns_fd(args):
    # Opened before the user is taken: the file stands for any namespace
    # file the user can open (/run/netns/* is world-readable on a default
    # system) or be passed.
    fd = os.open(args.netns, os.O_RDONLY)

    if args.setuid:
        pid = os.fork()
        if pid == 0:
            try:
                netns_setuid(args, fd)
            finally:
                os._exit(1)
        os.waitpid(pid, 0)
        time.sleep(0.3)  # the asking child reports after its parent is gone
        return 0

    def child():
        out = ep_create_in(connect(args.socket), args.iface, fd)
        print(out)
        return 1 if out == "no answer" else 0
    return in_child(args, child)


def groups(args):
    def child():
        body = ask(args.socket, REQ_WHOAMI, whoami_body(args.iface))
        if body is None:
            return 1
        uid, gid, pid, ngids = struct.unpack_from("=IIII", body)
        allowed = struct.unpack_from("=I", body, 16 + 65 * 4)[0]
        print("ngids %d allowed %d" % (ngids, allowed))
        return 0
    return in_child(args, child)


def ep_create_attack(args):
    def child():
        s = connect(args.socket)
        print(ep_create(s, args.iface, 2))
        s.close()
        return 0
    return in_child(args, child)


def while_busy(ask, busy):
    """ask() again every 20 ms while busy(answer) (the daemon's EBUSY: the
    device's last interface still being torn down), for 3 s at most, as
    the library does: the last answer, and how many were busy."""
    n = 0
    for _ in range(150):
        ans = ask()
        if not busy(ans):
            break
        n += 1
        time.sleep(0.02)
    return ans, n


def ep_cycle(args):
    """Create and destroy an emulated endpoint on --iface, one connection,
    for --seconds (at most --count times): prints "cycled N"."""
    def child():
        s = connect(args.socket)
        made = 0
        end = time.monotonic() + args.seconds
        for i in range(args.count):
            if time.monotonic() > end:
                break
            body = struct.pack("=16sIIII", args.iface.encode(), 2, 0, 0, 0)
            def ask():
                s.send(request(REQ_EP_CREATE, body, seq=2 * i + 1))
                return recv_reply(s, 10.0)
            rep, _ = while_busy(ask, lambda r: r is not None and r[0] == -errno.EBUSY)
            if rep is None or rep[0]:
                print("EP_CREATE answered %s" % (rep and rep[:2],))
                return 1
            for f in rep[3]:
                os.close(f)
            ep = struct.unpack_from("=I", rep[2])[0]
            s.send(request(REQ_EP_DESTROY, struct.pack("=II", ep, 0), seq=2 * i + 2))
            rep = recv_reply(s, 10.0)
            if rep is None or rep[0]:
                print("EP_DESTROY answered %s" % (rep and rep[:2],))
                return 1
            made += 1
        s.close()
        print("cycled %d" % made)
        return 0
    return in_child(args, child)


def status(args):
    def child():
        body = ask(args.socket, REQ_STATUS)
        if body is None:
            return 1
        ncl, nep, nl, throttled = struct.unpack_from("=IIII", body)
        print("clients %d endpoints %d listed %d" % (ncl, nep, nl))
        print("throttled %d" % throttled)
        off = 32
        # unetd_status_ep: 4 u32, ifname[16], share, pad, then counters
        # that grow with the protocol: its size is what the body gives.
        ep_size = (len(body) - off) // nl if nl else 0
        if nl and (ep_size < 40 or off + nl * ep_size != len(body)):
            print("status body of %d bytes does not hold %d entries" % (len(body), nl))
            return 1
        for _ in range(nl):
            _ep, uid, pid, _nch = struct.unpack_from("=IIII", body, off)
            ifname = body[off + 16:off + 32].split(b"\0", 1)[0].decode()
            share = struct.unpack_from("=I", body, off + 32)[0]
            print("ep %d %d %s" % (uid, pid, ifname))
            print("share %d %d" % (uid, share))
            off += ep_size
        return 0
    return in_child(args, child)


def ep_create(s, iface, kind, fds_out=None):
    body = struct.pack("=16sIIII", iface.encode(), kind, 0, 0, 0)
    s.send(request(REQ_EP_CREATE, body))
    rep = recv_reply(s)
    if rep is None:
        return "no answer"
    err, msg, body, fds = rep
    if fds_out is not None:
        fds_out.extend(fds)
    else:
        for f in fds:
            os.close(f)
    if err:
        return "refused %s %s" % (errno.errorcode.get(-err, str(-err)), msg)
    return "granted %s" % KIND_NAMES.get(struct.unpack_from("=II", body)[1], "?")


def held(path, iface):
    s = connect(path)
    s.send(request(REQ_WHOAMI, whoami_body(iface)))
    rep = recv_reply(s)
    s.close()
    if rep is None or rep[0]:
        return "no answer"
    eps = struct.unpack_from("=I", rep[2], 304)[0]
    nbytes = struct.unpack_from("=Q", rep[2], 312)[0]
    return "held %d %d" % (eps, nbytes)


def grant_linger(args):
    def child():
        fds = []
        s = connect(args.socket)
        first = ep_create(s, args.iface, 1, fds)
        print("first %s" % first)
        if not first.startswith("granted direct"):
            return 1
        s.close()          # the connection goes; the socket stays with us
        time.sleep(0.5)
        print(held(args.socket, args.iface))
        s2 = connect(args.socket)
        print("second %s" % ep_create(s2, args.iface, 1))
        s2.close()
        for f in fds:
            os.close(f)
        time.sleep(1.0)
        s3 = connect(args.socket)
        print("third %s" % ep_create(s3, args.iface, 1))
        s3.close()
        return 0
    return in_child(args, child)


def fake_daemon(args):
    def child():
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        lst.bind(args.socket)
        os.chmod(args.socket, 0o666)
        lst.listen(4)
        print("listening", flush=True)
        lst.settimeout(20)
        for _ in range(args.count):
            try:
                c, _addr = lst.accept()
            except socket.timeout:
                break
            c.settimeout(5)
            try:
                data = c.recv(4096)
            except socket.timeout:
                c.close()
                continue
            if len(data) >= REQ_HDR.size:
                _v, typ, _l, seq, _r = REQ_HDR.unpack_from(data)
                rep = REP_HDR.pack(VERSION, typ, 8, seq, 0, b"") + struct.pack("=II", VERSION, 0)
                c.send(rep)
            time.sleep(0.5)
            c.close()
        return 0
    return in_child(args, child)


def whoami_flood(args):
    def child():
        s = connect(args.socket)
        answered = limited = 0
        start = time.monotonic()
        for i in range(args.count):
            if args.per and i and i % args.per == 0:
                s.close()  # a fresh connection: it must not bring a fresh budget
                s = connect(args.socket)
            s.send(request(REQ_WHOAMI, whoami_body(args.iface), seq=i))
            rep = recv_reply(s)
            if rep is None:
                print("no answer to request %d" % i)
                return 1
            if rep[0] == 0:
                answered += 1
            elif rep[0] == -errno.EAGAIN:
                limited += 1
        print("answered %d limited %d seconds %.2f" % (answered, limited, time.monotonic() - start))
        return 0
    return in_child(args, child)


REQ_CH_OPEN_IPV6 = 14


def chan_open_flood(args):
    """As the user: an emulated endpoint on --iface in the namespace
    --netns, then CH_OPEN_IPV6 to --peer (a neighbour nobody answers: the
    daemon says EAGAIN at once) back to back for --seconds (at most
    --count).  Prints how many the daemon answered: what a user's
    requests of a costly kind get out of the daemon's one thread."""
    def child():
        s = connect(args.socket)
        nsfd = os.open(args.netns, os.O_RDONLY)
        ans = ep_create_in(s, args.iface, nsfd)
        os.close(nsfd)
        if not ans.startswith("granted"):
            print("endpoint: %s" % ans)
            return 1
        s.send(request(REQ_STATUS))
        rep = recv_reply(s)
        ep = struct.unpack_from("=I", rep[2], struct.calcsize("=IIIIQQ"))[0]
        peer = socket.inet_pton(socket.AF_INET6, args.peer)
        answered = 0
        end = time.monotonic() + args.seconds
        for i in range(args.count):
            if time.monotonic() >= end:
                break
            s.send(request(REQ_CH_OPEN_IPV6, struct.pack("=I16sHHHH", ep, peer, 5, 1, 0, 0),
                           seq=i + 2))
            if recv_reply(s, 30.0) is None:
                print("open %d: no answer" % i)
                return 1
            answered += 1
        print("answered %d" % answered)
        return 0
    return in_child(args, child)


def throttled_hangup(args):
    """As the user: an endpoint in each namespace of --netns (a comma
    list; each ~100 ms of the daemon's CPU: past the user's CPU burst),
    then HELLOs until one waits (the user is throttled), then hang up
    with it unanswered.  Prints what it did."""
    def child():
        s = connect(args.socket)
        for p in args.netns.split(","):
            nsfd = os.open(p, os.O_RDONLY)
            ans = ep_create_in(s, args.iface, nsfd)
            os.close(nsfd)
            if not ans.startswith("granted"):
                print("endpoint in %s: %s" % (p, ans))
                return 1
        for i in range(300):
            s.send(request(REQ_HELLO, seq=100 + i))
            if recv_reply(s, 0.05) is None:
                s.close()
                print("throttled after %d, hung up" % i)
                return 0
        print("never throttled")
        return 1
    return in_child(args, child)


def netns_hold(args):
    """As the user, on one connection: an emulated endpoint on each
    interface of --iface in each namespace of --netns (comma lists), then "held N pid P" (P: the
    process holding them, for the test to SIGKILL) and hold them for
    --hold seconds (30 by default)."""
    def child():
        s = connect(args.socket)
        n = 0
        for p in args.netns.split(","):
            nsfd = os.open(p, os.O_RDONLY)
            for iface in args.iface.split(","):
                ans = ep_create_in(s, iface, nsfd)
                if not ans.startswith("granted"):
                    print("endpoint on %s in %s: %s" % (iface, p, ans))
                    return 1
                n += 1
            os.close(nsfd)
        print("held %d pid %d" % (n, os.getpid()))
        sys.stdout.flush()
        time.sleep(args.hold or 30.0)
        return 0
    return in_child(args, child)


def recreate(args):
    """As the user, --rounds times: an emulated endpoint in the namespace
    --netns on one connection, hang up, and at once another on a new
    connection (the daemon reaps the first, whose interface goes, then
    sets the device up again; while the old interface's teardown is queued
    or under way it answers EBUSY, and we ask again every 20 ms, for 3 s at
    most, as the library does).  Prints "recreated N pid P busy B" (B: the
    EBUSY answers) and holds the last endpoint for --hold seconds (30 by
    default)."""
    def child():
        nsfd = os.open(args.netns, os.O_RDONLY)
        s2 = None
        busy = 0
        for i in range(args.rounds):
            s1 = connect(args.socket)
            ans = ep_create_in(s1, args.iface, nsfd)
            s1.close()
            if s2 is not None:
                s2.close()
            if not ans.startswith("granted"):
                print("round %d, first: %s" % (i, ans))
                return 1
            s2 = connect(args.socket)
            ans, n = while_busy(lambda: ep_create_in(s2, args.iface, nsfd),
                                lambda a: a.startswith("refused EBUSY"))
            busy += n
            if not ans.startswith("granted"):
                print("round %d, again: %s" % (i, ans))
                return 1
        print("recreated %d pid %d busy %d" % (args.rounds, os.getpid(), busy))
        sys.stdout.flush()
        time.sleep(args.hold or 30.0)
        return 0
    return in_child(args, child)


def status_ping(args):
    """As the user, on one connection: STATUS every 2 ms for --seconds;
    prints "pings N worst W ms" (W: the longest round trip)."""
    def child():
        s = connect(args.socket)
        n, worst = 0, 0.0
        end = time.monotonic() + args.seconds
        while time.monotonic() < end and n < 100000:
            t = time.monotonic()
            s.send(request(REQ_STATUS, seq=n + 1))
            if recv_reply(s, 10.0) is None:
                print("ping %d: no answer" % n)
                return 1
            worst = max(worst, (time.monotonic() - t) * 1e3)
            n += 1
            time.sleep(0.002)
        print("pings %d worst %.1f ms" % (n, worst))
        return 0
    return in_child(args, child)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--uid", type=int, required=True)
    ap.add_argument("--groups", default="")
    ap.add_argument("attack", choices=["race-hangup", "close-blocks", "netns-fd", "groups",
                                       "status", "whoami-flood", "grant-linger",
                                       "fake-daemon", "chan-open-flood", "throttled-hangup",
                                       "ep-create", "netns-hold", "status-ping",
                                       "recreate", "ep-cycle"])
    ap.add_argument("--daemon-pid", type=int)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--hold", type=float, default=0.0)
    ap.add_argument("--netns")
    ap.add_argument("--setuid", help="netns-fd: exec this setuid-root program after connecting")
    ap.add_argument("--iface", default="")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--per", type=int, default=0, help="whoami-flood: a new connection every N requests")
    ap.add_argument("--peer", default="fd77::ffff:1", help="chan-open-flood: the silent peer")
    ap.add_argument("--seconds", type=float, default=1.0, help="chan-open-flood, status-ping: how long")
    args = ap.parse_args()
    args.groups = [int(g) for g in args.groups.split(",") if g]
    fn = {"race-hangup": race_hangup, "close-blocks": close_blocks, "netns-fd": netns_fd,
          "groups": groups, "status": status, "whoami-flood": whoami_flood,
          "grant-linger": grant_linger, "fake-daemon": fake_daemon,
          "chan-open-flood": chan_open_flood, "throttled-hangup": throttled_hangup,
          "ep-create": ep_create_attack, "netns-hold": netns_hold,
          "status-ping": status_ping, "recreate": recreate, "ep-cycle": ep_cycle}[args.attack]
    if args.attack == "race-hangup" and not args.daemon_pid:
        ap.error("race-hangup needs --daemon-pid")
    if args.attack in ("netns-fd", "chan-open-flood", "throttled-hangup", "netns-hold",
                       "recreate") and not (args.netns and args.iface):
        ap.error("netns-fd needs --netns and --iface")
    sys.exit(fn(args))


if __name__ == "__main__":
    main()
