#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""TCP socket options a U-Net connection follows under unet-run
(docs/unet-run.md, "Socket options").

  tcp-options.py listener ADDR PORT   (the side under unet-run)
      a listener with SO_KEEPALIVE, TCP_KEEPIDLE 3, SO_LINGER {1, 0} and
      IP_TOS 0x28:
      prints what the accepted socket reports (it inherits them, as the
      kernel's does), reads one request and closes: linger 0 resets.
  tcp-options.py reset-client ADDR PORT   (a kernel socket)
      sends a request and prints "reset" if the connection is reset,
      "end" if it ends with FIN; then the TOS bytes of the server's
      segments after its SYN-ACK ("server tos 0x28").
  tcp-options.py keepalive-client ADDR PORT   (the side under unet-run)
      connects, sets keepalive (idle 1 s, interval 1 s, 2 probes) and a
      15 s receive timeout, prints "ready", and waits for data that never
      comes: prints "ETIMEDOUT" when keepalive gives up on a silent peer,
      "EAGAIN" when the receive timeout came first.
  tcp-options.py linger-server ADDR PORT   (the side under unet-run)
      sends 160 KiB to the first client (send returns at once), closes with SO_LINGER {1, 3000000}
      and kills itself with SIGKILL the moment close returns: the data
      reaches the client only if close waited until it was acknowledged.
  tcp-options.py slow-client ADDR PORT   (a kernel socket)
      a small receive buffer, a 2 s pause before reading, then reads up
      to 160 KiB (10 s timeout); prints "got N bytes, intact" or "..., NOT
      as sent".
  tcp-options.py silent-server ADDR PORT   (a kernel socket)
      accepts one connection and holds it without a word.
"""
import errno
import os
import signal
import socket
import struct
import sys
import time


def listener(addr, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 3)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ls.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x28)
    ls.bind((addr, port))
    ls.listen(1)
    print("ready endpoint=0", flush=True)
    c, _ = ls.accept()
    on = c.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
    idle = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
    lg = struct.unpack("ii", c.getsockopt(socket.SOL_SOCKET, socket.SO_LINGER, 8))
    print("accepted keepalive %d idle %d linger %d %d" % (on, idle, lg[0], lg[1]), flush=True)
    c.settimeout(10)
    req = c.recv(100)
    print("request %r" % req, flush=True)
    c.close()
    ls.close()


def reset_client(addr, port):
    # Every IPv4 frame the namespace receives, to read the server's TOS.
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s = socket.create_connection((addr, port), timeout=10)
    s.sendall(b"hello")
    try:
        while s.recv(100):
            pass
        print("end")
    except ConnectionResetError:
        print("reset")
    raw.setblocking(False)
    tos = set()
    while True:
        try:
            ip = raw.recv(2048)
        except BlockingIOError:
            break
        ihl = (ip[0] & 15) * 4
        if ip[9] == 6 and socket.inet_ntoa(ip[12:16]) == addr and \
                struct.unpack("!H", ip[ihl:ihl + 2])[0] == port and not ip[ihl + 13] & 0x02:
            tos.add(ip[1])  # segments after the SYN-ACK
    print("server tos", " ".join("0x%02x" % t for t in sorted(tos)))


def keepalive_client(addr, port):
    s = socket.create_connection((addr, port), timeout=10)
    s.settimeout(None)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 2)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 15, 0))
    print("ready endpoint=0", flush=True)
    try:
        d = s.recv(100)
        print("data %r" % d)
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)))


# Less than the U-Net connection's send buffer: send returns at once,
# with most of it unacknowledged while the slow client sleeps.
DATA = bytes(i % 251 for i in range(160 << 10))


def accept_one(addr, port):
    """Listen on addr:port, say ready, and accept one connection."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    print("ready endpoint=0", flush=True)
    return ls.accept()[0]


def linger_server(addr, port):
    c = accept_one(addr, port)
    c.sendall(DATA)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 3000000))  # 35 days: "forever", and past an int of ms
    c.close()
    print("closed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def slow_client(addr, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    s.settimeout(10)
    s.connect((addr, port))
    time.sleep(2)
    got = bytearray()
    try:
        while len(got) < len(DATA):
            d = s.recv(1 << 16)
            if not d:
                break
            got += d
    except OSError as e:
        print("error", e)
    print("got", len(got), "bytes, intact" if got == DATA else "bytes, NOT as sent")


def silent_server(addr, port):
    c = accept_one(addr, port)  # held, without a word
    time.sleep(30)  # the test ends it, by pid


if __name__ == "__main__":
    {"listener": listener, "reset-client": reset_client,
     "keepalive-client": keepalive_client,
     "linger-server": linger_server, "slow-client": slow_client,
     "silent-server": silent_server}[sys.argv[1]](sys.argv[2], int(sys.argv[3]))
