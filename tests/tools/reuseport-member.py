#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""One process's share of a UDP port and a TCP port shared by several
processes with SO_REUSEPORT; run under unet-run by the
unet_run_reuseport_procs test.

  reuseport-member.py member ADDR UDP_PORT TCP_PORT
      SO_REUSEPORT on both; prints "ready endpoint=0", then one line per
      datagram ("udp SOURCE_PORT SEQ") and per connection served ("tcp
      SOURCE_PORT": 4096 bytes read and echoed), until killed.
  reuseport-member.py try ADDR UDP_PORT TCP_PORT REUSEPORT(0|1)
      binds the UDP port and listens on the TCP port once, prints
      "udp bind ok|ERRNO" and "tcp listen ok|ERRNO", and exits.
"""
import errno
import select
import socket
import sys

mode, addr, uport, tport = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
reuse = mode == "member" or sys.argv[5] == "1"


def sock(kind):
    s = socket.socket(socket.AF_INET, kind)
    if reuse:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return s


def attempt(what, fn):
    try:
        fn()
        print(what, "ok", flush=True)
        return True
    except OSError as e:
        print(what, errno.errorcode.get(e.errno, e.errno), flush=True)
        return False


u = sock(socket.SOCK_DGRAM)
t = sock(socket.SOCK_STREAM)
if mode == "try":
    attempt("udp bind", lambda: u.bind((addr, uport)))
    # unet-run decides a TCP socket at listen (its bind is remembered).
    attempt("tcp listen", lambda: (t.bind((addr, tport)), t.listen(8)))
    sys.exit(0)

u.bind((addr, uport))
t.bind((addr, tport))
t.listen(16)
print("ready endpoint=0", flush=True)
while True:
    r, _, _ = select.select([u, t], [], [])
    if u in r:
        d, (_, p) = u.recvfrom(100)
        print("udp", p, int(d.split()[1]), flush=True)
    if t in r:
        c, (_, p) = t.accept()
        c.settimeout(10)
        got = b""
        while len(got) < 4096:
            d = c.recv(4096 - len(got))
            if not d:
                break
            got += d
        c.sendall(got)
        c.close()
        print("tcp", p, flush=True)
