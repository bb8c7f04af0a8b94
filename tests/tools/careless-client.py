#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""careless-client.py ADDR PORT UDP_PORT: the other side of
careless-server.py (the kernel's sockets)."""
import socket, struct, sys

addr, port = sys.argv[1], int(sys.argv[2])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("0.0.0.0", int(sys.argv[3])))
u.settimeout(10)
s = socket.create_connection((addr, port), timeout=10)
s.sendall(b"GET /half-a-requ")
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()  # a reset, not a FIN
s = socket.create_connection((addr, port), timeout=10)
s.sendall(b"ping")
r = s.recv(100)
if r != b"echo:ping":
    sys.exit("second client: %r" % r)
d, _ = u.recvfrom(4096)
if d != b"y" * 1472:
    sys.exit("udp: %d bytes" % len(d))
held = socket.create_connection((addr, port), timeout=10)
print("client ok", flush=True)
