#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp-tiny.py - 1-byte segments into a live connection to a server that
does not read (docs/tcp.md, "Memory"; t_tcp.sh, tcp_tiny).

  tcp-tiny.py IFACE DST_MAC SRC_IP DST_IP PORT N

Two connections made by hand with AF_PACKET on IFACE from SRC_IP (an
address nobody on the link has, so no kernel answers for it):
  - in order: N 1-byte segments at the next sequence numbers;
  - out of order: N 1-byte segments two apart, the first byte never
    sent (so none becomes in order), all within the 64 KiB window.
Sent in bursts of 500 with 5 ms between them (bounded: 2N frames, at
most 60 s).  Prints "tiny sent=2N secs=T"; exit 0 once both handshakes
completed and everything was sent.
"""
import ctypes
import socket
import struct
import sys
import time

from inet_csum import csum_add, fold


class Conn:
    def __init__(self, raw, smac, dmac, sip, dip, sport, dport):
        self.raw, self.smac, self.dmac = raw, smac, dmac
        self.sip, self.dip, self.sport, self.dport = sip, dip, sport, dport
        self.isn, self.srv = 5000 + sport, 0

    def seg(self, seq, ack, flags, data=b""):
        tcp = struct.pack("!HHIIBBHHH", self.sport, self.dport, seq & 0xFFFFFFFF,
                          ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0) + data
        c = fold(csum_add(self.sip + self.dip + struct.pack("!BBH", 0, 6, len(tcp)) + tcp))
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0,
                         self.sip, self.dip)
        ip = ip[:10] + struct.pack("!H", fold(csum_add(ip))) + ip[12:]
        f = self.dmac + self.smac + b"\x08\x00" + ip + tcp
        return f + b"\0" * max(0, 60 - len(f))

    def connect(self):
        self.raw.send(self.seg(self.isn, 0, 0x02))
        deadline = time.time() + 5
        while time.time() < deadline:
            self.raw.settimeout(max(0.01, deadline - time.time()))
            try:
                f = self.raw.recv(2048)
            except socket.timeout:
                break
            if len(f) < 54 or f[23] != 6 or f[26:30] != self.dip:
                continue
            t = f[14 + (f[14] & 15) * 4:]
            sp, dp, seq = struct.unpack("!HHI", t[:8])
            if sp == self.dport and dp == self.sport and t[13] & 0x12 == 0x12:
                self.srv = seq + 1
                self.raw.send(self.seg(self.isn + 1, self.srv, 0x10))
                return True
        return False


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    ifname, dmac = sys.argv[1], bytes(int(x, 16) for x in sys.argv[2].split(":"))
    sip, dip = socket.inet_aton(sys.argv[3]), socket.inet_aton(sys.argv[4])
    port, n = int(sys.argv[5]), min(int(sys.argv[6]), 30000)
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    # only frames to sip (classic BPF: ld [30]; jeq sip; ret all / 0)
    ins = [(0x20, 0, 0, 30), (0x15, 0, 1, struct.unpack("!I", sip)[0]), (0x06, 0, 0, 0xFFFF),
           (0x06, 0, 0, 0)]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *i) for i in ins))
    raw.setsockopt(socket.SOL_SOCKET, 26, struct.pack("HL", len(ins), ctypes.addressof(buf)))
    raw.bind((ifname, 0))
    smac = raw.getsockname()[4]
    inorder = Conn(raw, smac, dmac, sip, dip, 41000, port)
    ooo = Conn(raw, smac, dmac, sip, dip, 41001, port)
    if not inorder.connect() or not ooo.connect():
        sys.exit("no handshake with the server")
    time.sleep(0.2)
    t0, sent = time.time(), 0
    for i in range(0, n, 500):
        for j in range(i, min(n, i + 500)):
            raw.send(inorder.seg(inorder.isn + 1 + j, inorder.srv, 0x18, b"i"))
            raw.send(ooo.seg(ooo.isn + 2 + 2 * j, ooo.srv, 0x18, b"o"))
            sent += 2
        time.sleep(0.005)
        if time.time() - t0 > 60:
            break
    print("tiny sent=%d secs=%.2f" % (sent, time.time() - t0), flush=True)
    time.sleep(0.5)
    sys.exit(0 if sent == 2 * n else 1)


if __name__ == "__main__":
    main()
