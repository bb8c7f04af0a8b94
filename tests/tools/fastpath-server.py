#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fastpath-server.py ADDR PORT CONNS: an epoll server that answers with
writev, as nginx does, checking the readiness rules an event loop relies
on across many connections (run against fastpath-client.py).

Connections alternate between level-triggered EPOLLIN, read 7 bytes
per event (the rest of a request must be reported again), and
EPOLLIN|EPOLLONESHOT, read 1 byte, then a zero-timeout wait with the
rest of the request still unread (a disarmed connection must not be
reported), then the rest, then re-armed with EPOLL_CTL_MOD.  epoll_wait
takes at most 4 events, fewer than the connections ready, so what is
left over must come at the next wait.  A request is a line "N SEED\\n"; the reply is N bytes
from SEED, written with one os.writev of pieces of sizes 1..5000 (most
small, some crossing 4 KiB, the last one whatever is left).  "S\\n" asks
for a 100-byte header and a 1000-byte body in one writev (the client
counts the segments they come in).  Prints "ok served=N" when every
connection has closed, or "FAIL ..." and exits 1."""
import collections, os, random, select, socket, sys

def fail(msg):
    print("FAIL", msg, flush=True)
    sys.exit(1)

def payload(n, seed):
    return random.Random(seed).randbytes(n)

def pieces(data, seed):
    rnd, out, off = random.Random(seed ^ 0x5a5a), [], 0
    while off < len(data):
        k = rnd.choice((1, 7, 100, 1000, 3000, 4095, 4096, 4097, 5000))
        out.append(data[off:off + k])
        off += k
    return out

conns = int(sys.argv[3])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], int(sys.argv[2])))
ls.listen(conns)
ls.setblocking(False)
ep = select.epoll()
ep.register(ls, select.EPOLLIN)
print("ready endpoint=0", flush=True)
socks, bufs, oneshot, armed = {}, {}, set(), {}
accepted = served = 0
listening_done = False
pending = collections.deque()
while accepted < conns or socks:
    if not pending:
        evs = ep.poll(10, 4)
        if not evs:
            fail("10 s without an event (accepted %d, open %d)" % (accepted, len(socks)))
        pending.extend(evs)
    while pending:
        fd, ev = pending.popleft()
        if fd == ls.fileno():
            while True:
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    break
                c.setblocking(True)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                socks[c.fileno()], bufs[c.fileno()] = c, b""
                if accepted % 2:
                    oneshot.add(c.fileno())
                    armed[c.fileno()] = True
                    ep.register(c, select.EPOLLIN | select.EPOLLONESHOT)
                else:
                    ep.register(c, select.EPOLLIN)
                accepted += 1
            if accepted == conns and not listening_done:
                ep.unregister(ls)
                listening_done = True
            continue
        c = socks.get(fd)
        if c is None:
            continue  # reported twice (once by the zero-timeout wait) and closed since
        if fd in oneshot:
            if not armed[fd]:
                fail("a one-shot registration fired again before it was re-armed")
            armed[fd] = False
            try:
                d = c.recv(1, socket.MSG_DONTWAIT)
            except BlockingIOError:
                fail("a one-shot connection reported readable had nothing to read")
            if d:
                for fd2, ev2 in ep.poll(0, 64):
                    if fd2 == fd:
                        fail("a one-shot registration fired again before it was re-armed")
                    pending.append((fd2, ev2))
                c.setblocking(False)
                try:
                    d += c.recv(65536)
                except BlockingIOError:
                    pass
                c.setblocking(True)
        else:
            try:
                d = c.recv(7, socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue  # reported twice: the first read took it
        if not d:
            ep.unregister(c)
            del socks[fd]
            oneshot.discard(fd)
            c.close()
            continue
        bufs[fd] += d
        while b"\n" in bufs[fd]:
            line, bufs[fd] = bufs[fd].split(b"\n", 1)
            f = line.split()
            if f == [b"S"]:
                parts = [b"h" * 99 + b"\n", b"b" * 1000]
            else:
                parts = pieces(payload(int(f[0]), int(f[1])), int(f[1]))
            want = sum(len(p) for p in parts)
            wrote = os.writev(c.fileno(), parts)
            if wrote != want:
                fail("a blocking writev wrote %d of %d bytes (%d pieces)" % (wrote, want, len(parts)))
            served += 1
        if fd in oneshot:
            armed[fd] = True
            ep.modify(c, select.EPOLLIN | select.EPOLLONESHOT)
print("ok served=%d" % served, flush=True)
