#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fastpath-client.py ADDR PORT CONNS ROUNDS: the other side of
fastpath-server.py.  Opens CONNS connections; in each round sends every
connection a request (sizes up to 100 000 bytes, so that the server's send
buffer, 64 KiB under unet-run, fills in the middle of a writev; not much
more, as the server writes each reply whole before the next and the
client reads them in order) and then checks every reply byte for byte.
Then, on one connection, ROUNDS header-and-body replies one at a time,
and prints how many data segments they came in (the kernel's
TCP_INFO tcpi_data_segs_in): "segments N of ROUNDS replies".
Exits 1 on any mismatch."""
import random, socket, struct, sys

def fail(msg):
    print("FAIL", msg, flush=True)
    sys.exit(1)

def recv_exact(s, n):
    b = bytearray()
    while len(b) < n:
        d = s.recv(min(65536, n - len(b)))
        if not d:
            fail("the server closed early")
        b += d
    return bytes(b)

addr, port, conns, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cs = []
for _ in range(conns):
    s = socket.create_connection((addr, port), timeout=20)
    cs.append(s)
rnd = random.Random(7)
for r in range(3):
    want = []
    for i, s in enumerate(cs):
        n, seed = rnd.choice((1, 1100, 4096, 9000, 70000, 100000)), rnd.randrange(1 << 30)
        s.sendall(b"%d %d\n" % (n, seed))
        want.append((n, seed))
    for i, s in enumerate(cs):
        n, seed = want[i]
        if recv_exact(s, n) != random.Random(seed).randbytes(n):
            fail("reply %d on connection %d differs" % (r, i))
s = cs[0]
TCP_INFO_LEN, DATA_SEGS_IN = 160, 152
before = struct.unpack_from("I", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN), DATA_SEGS_IN)[0]
for r in range(rounds):
    s.sendall(b"S\n")
    if recv_exact(s, 1100) != b"h" * 99 + b"\n" + b"b" * 1000:
        fail("header and body reply %d differs" % r)
after = struct.unpack_from("I", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN), DATA_SEGS_IN)[0]
for s in cs:
    s.close()
print("segments %d of %d replies" % (after - before, rounds), flush=True)
