#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""epoll-et-client.py ADDR PORT: the other side of epoll-et-server.py
(blocking sockets, the kernel's or unet-run's).  Exits 0 when every
reply and every bulk byte came as sent."""
import socket, sys, time

ROUNDS, BULK = 200, 4 << 20
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
f = s.makefile("rb")
for i in range(ROUNDS):
    s.sendall(b"req%05d\n" % i)
    if f.readline() != b"rep%05d\n" % i:
        sys.exit("reply %d wrong" % i)
s.sendall(b"a" * 100)
if f.readline() != b"more\n":
    sys.exit("no 'more'")
s.sendall(b"b" * 100)
time.sleep(0.3)  # let the server fill its send buffer and see EAGAIN
want = bytes((i * 7 + 3) % 251 for i in range(BULK))
got = f.read(BULK)
if got != want:
    sys.exit("bulk: %d bytes, first difference at %s" % (
        len(got), next((i for i in range(min(len(got), BULK)) if got[i] != want[i]), "end")))
s.sendall(b"done\n")
print("client ok", flush=True)
