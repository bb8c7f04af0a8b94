#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""careless-server.py ADDR PORT UDP_PORT: what a careless peer does to
a server, and what the server must see (run under unet-run against
careless-client.py).

TCP on PORT: the first client sends half a request and resets the
connection (SO_LINGER 0): the server's recv reports ECONNRESET (or the
end), and the server goes on: the second client's request is echoed.
Then the server says "hold" and waits forever with a connection open:
the test SIGKILLs it there.
UDP on UDP_PORT: a datagram larger than the interface's MTU is refused
with EMSGSIZE (no IP fragmentation on U-Net), and one that fits goes."""
import errno, socket, sys, time

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], int(sys.argv[2])))
ls.listen(4)
print("ready endpoint=0", flush=True)
c, _ = ls.accept()
c.settimeout(10)
got = b""
try:
    while True:
        d = c.recv(65536)
        if not d:
            print("reset seen as end of stream after %d bytes" % len(got), flush=True)
            break
        got += d
except ConnectionResetError:
    print("reset seen as ECONNRESET after %d bytes" % len(got), flush=True)
c.close()
c, _ = ls.accept()
c.settimeout(10)
req = c.recv(100)
c.sendall(b"echo:" + req)
print("second client served", flush=True)

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((sys.argv[1], int(sys.argv[3])))
peer = (sys.argv[4], int(sys.argv[5]))
try:
    u.sendto(b"x" * 2000, peer)
    print("FAIL: a 2000-byte datagram was sent", flush=True)
    sys.exit(1)
except OSError as e:
    if e.errno != errno.EMSGSIZE:
        print("FAIL: 2000 bytes: %s" % e, flush=True)
        sys.exit(1)
u.sendto(b"y" * 1472, peer)
print("udp: EMSGSIZE past the MTU, 1472 bytes sent", flush=True)
c2, _ = ls.accept()
print("hold", flush=True)
time.sleep(300)
