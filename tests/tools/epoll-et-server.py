#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""epoll-et-server.py ADDR PORT: the kernel's edge-triggered epoll
semantics that event loops (nginx, libuv) rely on, checked on one
accepted TCP connection (run against epoll-et-client.py).

1. Requests and replies, the connection registered EPOLLIN|EPOLLOUT|
   EPOLLET and read until EAGAIN (nginx's way): every request must bring
   a new EPOLLIN edge, though EPOLLOUT never went away.
2. A read that leaves data behind: no new edge until new data arrives,
   then one.
3. Writes until EAGAIN: an EPOLLOUT edge once the peer has read.
Prints "ok" and exits 0, or "FAIL ..." and exits 1."""
import select, socket, sys, time

ROUNDS, BULK = 200, 4 << 20

def fail(msg):
    print("FAIL", msg, flush=True)
    sys.exit(1)

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], int(sys.argv[2])))
ls.listen(4)
ls.setblocking(False)
ep = select.epoll()
ep.register(ls, select.EPOLLIN | select.EPOLLET)
print("ready endpoint=0", flush=True)
if not ep.poll(10):
    fail("no connection")
c, _ = ls.accept()
c.setblocking(False)
ep.unregister(ls)
ep.register(c, select.EPOLLIN | select.EPOLLOUT | select.EPOLLET)

def wait_for(bit, what, timeout=5.0):
    """Wait for an event with bit (others, such as the first EPOLLOUT of
    a fresh connection, may come before it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for fd, ev in ep.poll(max(0.0, deadline - time.monotonic())):
            if fd == c.fileno() and ev & bit:
                return
    fail("no edge: " + what)

def drain():
    got = b""
    while True:
        try:
            d = c.recv(65536)
        except BlockingIOError:
            return got
        if not d:
            return got
        got += d

# 1. One request at a time; the reply comes only after the request.
buf = b""
for i in range(ROUNDS):
    want = b"req%05d\n" % i
    while len(buf) < len(want):
        wait_for(select.EPOLLIN, "request %d" % i)
        buf += drain()
    if buf[:len(want)] != want:
        fail("request %d: %r" % (i, buf[:16]))
    buf = buf[len(want):]
    c.sendall(b"rep%05d\n" % i)

# 2. 100 bytes come; read 10; nothing new: no edge; the client sends 100
#    more when told: one new edge.
wait_for(select.EPOLLIN, "the first 100 bytes")
part = c.recv(10)
if part != b"a" * 10:
    fail("partial read %r" % part)
ev = [e for fd, e in ep.poll(0.2) if fd == c.fileno() and e & select.EPOLLIN]
if ev:
    fail("an EPOLLIN edge without new data (%r)" % ev)
c.sendall(b"more\n")
wait_for(select.EPOLLIN, "the second 100 bytes")
rest = drain()
if rest != b"a" * 90 + b"b" * 100:
    fail("after the partial read: %d bytes, %r..." % (len(rest), rest[:8]))

# 3. Bulk until EAGAIN, then wait for EPOLLOUT edges.
data = bytes((i * 7 + 3) % 251 for i in range(BULK))
off = eagain = 0
while off < len(data):
    try:
        off += c.send(data[off:off + 262144])
    except BlockingIOError:
        eagain += 1
        wait_for(select.EPOLLOUT, "writable after EAGAIN %d at %d bytes" % (eagain, off), 10)
if not eagain:
    fail("the send buffer never filled: the EPOLLOUT edge was not tested")
c.shutdown(socket.SHUT_WR)
c.setblocking(True)
c.settimeout(10)
if c.recv(16) != b"done\n":
    fail("the client did not confirm the bulk")
print("ok rounds=%d eagain=%d" % (ROUNDS, eagain), flush=True)
