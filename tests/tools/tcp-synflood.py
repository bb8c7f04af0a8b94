#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp-synflood.py - a SYN flood from spoofed sources, as fast as this
process can send, for a bounded time, with real clients connecting
through it (docs/tcp.md, "SYN floods"; t_tcp.sh, tcp_synflood).

  tcp-synflood.py IFACE DST_MAC DST_IP PORT SECS CLIENT_IP NCLIENTS [SLOW_IP RTT_MS]

A child process sends SYNs with AF_PACKET on IFACE until the clients
are done (SECS seconds at most), each from a random address of
198.18.0.0/15 (RFC 2544's range: nobody's; the SYN-ACKs come back to
IFACE's own MAC and die there) and a random port.  Once it has sent
WARM_SYNS (a quarter of SECS at most), NCLIENTS real kernel clients
(from CLIENT_IP) connect one after another, each with 3 s to connect
and echo 16 bytes.  With SLOW_IP, as many clients again made by hand
(AF_PACKET) from SLOW_IP, an address nobody on the link has, that wait
RTT_MS between the server's SYN-ACK and their ACK: a client with an
ordinary round trip, which a table of half-open connections must keep
that long under the flood.  They send again what gets no answer (300 ms)
as a real TCP does: at link rate the receive ring drops frames.  Prints "flood sent=N secs=T rate=R" and
"clients ok=K of N", exit 0 if all of them got through.
"""
import ctypes
import errno
import multiprocessing
import os
import random
import socket
import struct
import sys
import time

from inet_csum import csum_add, fold

# SYNs out before the clients come: a table of half-open connections
# (lwIP's, a listener's backlog of them) is full after a few hundred;
# this many also keeps the link saturated for a while first.
WARM_SYNS = 20000


def flood(ifname, dmac, dip, port, secs, out, warm, stop):
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    raw.bind((ifname, 0))
    smac = raw.getsockname()[4]
    # Template: IP header and TCP header with the varying fields at 0
    # (source address, source port, sequence number, both checksums);
    # per frame those are set and the checksums finished from the
    # template's sums.
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, 0, 0x4000, 64, 6, 0, b"\0" * 4, dip))
    tcp = bytearray(struct.pack("!HHIIBBHHH", 0, port, 0, 0, 5 << 4, 0x02, 65535, 0, 0))
    f = bytearray(dmac + smac + b"\x08\x00" + ip + tcp + b"\0" * 6)
    ip_sum = csum_add(bytes(ip))
    tcp_sum = csum_add(dip + struct.pack("!BBH", 0, 6, 20) + bytes(tcp))
    rnd = random.Random(os.getpid())
    sent, t0 = 0, time.time()
    end = t0 + secs
    while True:
        for _ in range(256):
            a = 0xC6120000 | rnd.getrandbits(17)  # 198.18.0.0/15
            sp = 1024 + rnd.getrandbits(15)
            seq = rnd.getrandbits(32)
            ah, al = a >> 16, a & 0xFFFF
            struct.pack_into("!I", f, 26, a)
            struct.pack_into("!H", f, 24, fold(ip_sum + ah + al))
            struct.pack_into("!HHI", f, 34, sp, port, seq)
            struct.pack_into("!H", f, 50, fold(tcp_sum + ah + al + sp + (seq >> 16) + (seq & 0xFFFF)))
            try:
                raw.send(f)
                sent += 1
            except OSError as e:
                # The device's queue is full (ENOBUFS): the link is
                # saturated, which is the point; let it drain a little.
                if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                time.sleep(0.0001)
        if sent >= WARM_SYNS and not warm.is_set():
            warm.set()
        if time.time() >= end or stop.is_set():
            break
    out.put((sent, t0, time.time()))


def client(dip, port, cip):
    try:
        c = socket.create_connection((dip, port), timeout=3, source_address=(cip, 0))
        c.sendall(b"0123456789abcdef")
        got = b""
        c.settimeout(3)
        while len(got) < 16:
            d = c.recv(16 - len(got))
            if not d:
                break
            got += d
        c.close()
        return got == b"0123456789abcdef"
    except OSError:
        return False


def slow_client(ifname, dmac, dip, port, sip, rtt, sport):
    """A handshake by hand from sip:sport, waiting rtt s before the ACK,
    then 16 bytes that must come back.  True if they did."""
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    # Only frames to sip: the flood's answers would drown the socket.
    ins = struct.pack("!HBBI", 0x20, 0, 0, 30) + struct.pack("!HBBI", 0x15, 0, 1,
                                                              struct.unpack("!I", sip)[0]) + \
        struct.pack("!HBBI", 0x06, 0, 0, 0xFFFF) + struct.pack("!HBBI", 0x06, 0, 0, 0)
    # struct sock_filter is host order: code u16, jt u8, jf u8, k u32
    ins = b"".join(struct.pack("=HBBI", *struct.unpack("!HBBI", ins[i:i + 8]))
                   for i in range(0, len(ins), 8))
    buf = ctypes.create_string_buffer(ins)
    prog = struct.pack("HL", len(ins) // 8, ctypes.addressof(buf))
    raw.setsockopt(socket.SOL_SOCKET, 26, prog)  # SO_ATTACH_FILTER
    raw.bind((ifname, 0))
    smac = raw.getsockname()[4]

    def seg(seq, ack, flags, data=b""):
        tcp = struct.pack("!HHIIBBHHH", sport, port, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          5 << 4, flags, 65535, 0, 0) + data
        c = fold(csum_add(sip + dip + struct.pack("!BBH", 0, 6, len(tcp)) + tcp))
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, sip, dip)
        ip = ip[:10] + struct.pack("!H", fold(csum_add(ip))) + ip[12:]
        f = dmac + smac + b"\x08\x00" + ip + tcp
        return f + b"\0" * max(0, 60 - len(f))

    def wait_for(want, deadline):
        while time.time() < deadline:
            raw.settimeout(max(0.01, deadline - time.time()))
            try:
                f = raw.recv(2048)
            except socket.timeout:
                break
            if len(f) < 54 or f[23] != 6 or f[26:30] != dip:
                continue
            t = f[14 + (f[14] & 15) * 4:]
            sp, dp, seq, ack = struct.unpack("!HHII", t[:12])
            if sp == port and dp == sport and want(t):
                return t, seq, ack
        return None

    # Like a real TCP, it sends again what got no answer (every 300 ms,
    # up to 3 s): at link rate the endpoint's receive ring overflows and
    # drops frames, the flood's and ours alike, before U-Net sees them.
    isn, msg = 7000 + sport, b"0123456789abcdef"
    try:
        r = None
        for _ in range(10):
            raw.send(seg(isn, 0, 0x02))
            r = wait_for(lambda t: t[13] & 0x12 == 0x12, time.time() + 0.3)
            if r:
                break
        if not r:
            return False
        srv = r[1]
        time.sleep(rtt)
        for _ in range(10):
            raw.send(seg(isn + 1, srv + 1, 0x18, msg))
            r = wait_for(lambda t: len(t) >= (t[12] >> 4) * 4 + 16 and
                         t[(t[12] >> 4) * 4:(t[12] >> 4) * 4 + 16] == msg, time.time() + 0.3)
            if r:
                break
        raw.send(seg(isn + 17, srv + 1 + (16 if r else 0), 0x14))  # RST: done
        return r is not None
    finally:
        raw.close()


def main():
    if len(sys.argv) not in (8, 10):
        sys.exit(__doc__)
    ifname, dmac = sys.argv[1], bytes(int(x, 16) for x in sys.argv[2].split(":"))
    dip_s, port, secs = sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    cip, n = sys.argv[6], int(sys.argv[7])
    secs = min(secs, 30.0)
    q = multiprocessing.Queue()
    warm, stop = multiprocessing.Event(), multiprocessing.Event()
    p = multiprocessing.Process(target=flood, args=(ifname, dmac, socket.inet_aton(dip_s),
                                                    port, secs, q, warm, stop))
    p.start()
    warm.wait(secs / 4)
    ok, t0 = 0, time.time()
    for _ in range(n):
        ok += client(dip_s, port, cip)
    total = n
    if len(sys.argv) == 10:
        sip, rtt = socket.inet_aton(sys.argv[8]), float(sys.argv[9]) / 1000
        total += n
        for i in range(n):
            ok += slow_client(ifname, dmac, socket.inet_aton(dip_s), port, sip, rtt, 30000 + i)
    tc = time.time() - t0
    stop.set()
    sent, fstart, fend = q.get(timeout=secs + 30)
    fsecs = fend - fstart
    p.join(10)
    print("flood sent=%d secs=%.2f rate=%d" % (sent, fsecs, sent / fsecs), flush=True)
    print("clients ok=%d of %d in %.2f s, %s the flood" %
          (ok, total, tc, "during" if fstart <= t0 and t0 + tc <= fend else "not all during"), flush=True)
    sys.exit(0 if ok == total else 1)


if __name__ == "__main__":
    main()
