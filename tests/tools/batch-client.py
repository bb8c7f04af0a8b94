#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Client side of unet_run_batch_sends: kernel sockets.

batch-client.py ADDR PORT N ROUNDS FIFO: open N connections; each round
send one request on every one, write "sent" to FIFO, then read every
answer (5 s each at most) and check it byte for byte.
"""
import socket
import sys

addr, port, n, rounds, fifo = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
conns = [socket.create_connection((addr, port), timeout=5) for _ in range(n)]
with open(fifo, "w") as f:
    for rnd in range(rounds):
        for i, c in enumerate(conns):
            c.sendall(b"round %d conn %d" % (rnd, i))
        f.write("sent\n")
        f.flush()
        for i, c in enumerate(conns):
            want = b"re:round %d conn %d" % (rnd, i)
            got = b""
            while len(got) < len(want):
                try:
                    part = c.recv(len(want) - len(got))
                except socket.timeout:
                    sys.exit(f"round {rnd} conn {i}: no answer in 5 s (got {got!r})")
                if not part:
                    sys.exit(f"round {rnd} conn {i}: closed after {got!r}")
                got += part
            if got != want:
                sys.exit(f"round {rnd} conn {i}: answer {got!r}, not {want!r}")
    f.write("end\n")
print("ok", rounds * n, "answers", flush=True)
