#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp-count.py - count the IPv4/TCP frames that reach an interface, by
destination port, whatever their checksums (an AF_PACKET socket sees them
before the kernel's TCP does): what a peer namespace got.

  tcp-count.py IFACE PORT [PORT...] [--seconds S]

Prints "ready iface=IFACE" once it listens; on SIGTERM (or after S seconds, default
60) prints "tcp-count PORT=N ..." and exits 0.
"""
import argparse
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003


def main():
    p = argparse.ArgumentParser()
    p.add_argument("iface")
    p.add_argument("ports", type=int, nargs="+")
    p.add_argument("--seconds", type=float, default=60)
    a = p.parse_args()
    counts = {port: 0 for port in a.ports}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    s.settimeout(0.1)
    print("ready iface=%s" % a.iface, flush=True)
    end = time.monotonic() + a.seconds
    while not stop and time.monotonic() < end:
        try:
            f, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == socket.PACKET_OUTGOING or len(f) < 14 + 20 + 4:
            continue
        if struct.unpack("!H", f[12:14])[0] != 0x0800 or f[23] != socket.IPPROTO_TCP:
            continue
        hl = (f[14] & 0xF) * 4
        if len(f) < 14 + hl + 4:
            continue
        dport = struct.unpack("!H", f[14 + hl + 2:14 + hl + 4])[0]
        if dport in counts:
            counts[dport] += 1
    print("tcp-count " + " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
