#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Two UDP sockets and two TCP listeners of one process on the same
ports with SO_REUSEPORT, as a multi-threaded server opens them (one per
worker); run under unet-run by the unet_run_reuseport test.

  reuseport-server.py ADDR UDP_PORT TCP_PORT SOURCES PER_SOURCE CONNS

Reads SOURCES x PER_SOURCE datagrams from both UDP sockets and prints,
per socket, how many it got, and whether every source's datagrams came
to one socket in order ("udp flows whole"); then accepts CONNS TCP
connections on whichever listener is ready, echoes 64 KiB on each and
prints "tcp served CONNS".
"""
import select
import socket
import sys

addr, uport, tport, nsrc, per, conns = sys.argv[1], *map(int, sys.argv[2:7])


def reuse(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return s


us = [reuse(socket.SOCK_DGRAM) for _ in range(2)]
for u in us:
    u.bind((addr, uport))
    u.setblocking(False)
ts = [reuse(socket.SOCK_STREAM) for _ in range(2)]
for t in ts:
    t.bind((addr, tport))
    t.listen(16)
print("ready endpoint=0", flush=True)

seen = {}  # source port -> (socket index, next expected sequence number)
counts = [0, 0]
whole = True
total = 0
while total < nsrc * per:
    r, _, _ = select.select(us, [], [], 20)
    if not r:
        break
    for u in r:
        i = us.index(u)
        try:
            d, (a, p) = u.recvfrom(100)
        except BlockingIOError:
            continue
        seq = int(d.split()[1])
        k, want = seen.get(p, (i, 0))
        if k != i or seq != want:
            whole = False
        seen[p] = (i, seq + 1)
        counts[i] += 1
        total += 1
print("udp counts", counts[0], counts[1], flush=True)
print("udp flows whole" if whole and len(seen) == nsrc else "udp flows split or lost", flush=True)

served = 0
while served < conns:
    r, _, _ = select.select(ts, [], [], 20)
    if not r:
        break
    c, _ = r[0].accept()
    c.settimeout(20)
    got = b""
    while len(got) < 65536:
        d = c.recv(65536)
        if not d:
            break
        got += d
    c.sendall(got)
    c.close()
    served += 1
print("tcp served", served, flush=True)
