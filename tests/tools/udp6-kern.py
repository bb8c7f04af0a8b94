#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""udp6-kern - the kernel side of the UDP/IPv6 integration tests.

  udp6-kern.py echo  --local [A]:P [--timeout S]
      kernel UDP/IPv6 echo server; prints "ready kernel", on SIGTERM/timeout
      prints "echo echoed=N" and exits 0.
  udp6-kern.py sizes --local [A]:P --remote [A]:P --max N [--timeout S]
      kernel UDP/IPv6 client: payloads of the sweep's sizes up to N (the
      same sweep as unet-udp6's size_next) to an echo service, each echo
      checked byte for byte; prints "sizes ok N".
  udp6-kern.py inject IFACE --dst-mac MAC --local [A]:P
                --send KIND,COUNT,[A]:P [--send ...]
      AF_PACKET frames from local to each --send's address, COUNT of
      each, in the order given, broken as KIND says:
      good, bad-csum, zero-csum (none: mandatory over IPv6), truncated
      (payload length past the frame), long-udp (UDP length past the
      payload length), hop-by-hop and fragment (an extension header before
      UDP), ns-hop254 and ns-bad-csum (neighbour solicitations for the
      remote address that must not be answered), src-group, src-loopback
      and src-mapped (a good datagram from ff02::1, ::1 or
      ::ffff:10.0.0.1: no host sends from those).

The payload of size n is seq_pattern(n, j) of tests/tools/tool_common.h.
Exit 0 on success, 1 on failure, 2 on usage errors.
"""
import argparse
import ipaddress
import signal
import socket
import struct
import sys
import time


def seq_pattern(seq, j):
    return ((seq * 131) ^ (j * 7) ^ (j >> 8) ^ 0xA5) & 0xFF


def payload(n):
    return bytes(seq_pattern(n, j) for j in range(n))


def size_sweep(mx):
    """unet-udp6.c's size_next: every size to 16, every 127th, the last 4."""
    size = 1
    while size and size <= mx:
        yield size
        if size < 16 or size + 4 >= mx:
            size += 1
        else:
            size = size + 127 if size + 127 < mx - 4 else mx - 4


def addr_port(s):
    if not s.startswith("[") or "]:" not in s:
        raise argparse.ArgumentTypeError("want [ADDR]:PORT")
    a, p = s[1:].rsplit("]:", 1)
    return str(ipaddress.IPv6Address(a)), int(p)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    t = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while t >> 16:
        t = (t & 0xFFFF) + (t >> 16)
    return t


def l4_csum(src, dst, proto, body):
    ph = src + dst + struct.pack("!IxxxB", len(body), proto)
    c = (~csum(ph + body)) & 0xFFFF
    return c if c else 0xFFFF


def frame(dst_mac, src_mac, src, dst, nh, body, plen=None, hop=64):
    ip = struct.pack("!IHBB", 6 << 28, len(body) if plen is None else plen, nh, hop) + src + dst
    return dst_mac + src_mac + b"\x86\xdd" + ip + body


def udp_body(src, dst, sport, dport, data, ulen=None, check=None):
    u = struct.pack("!HHHH", sport, dport, 8 + len(data) if ulen is None else ulen, 0) + data
    c = l4_csum(src, dst, 17, struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data)
    return u[:6] + struct.pack("!H", c if check is None else check) + u[8:]


def build(kind, dst_mac, src_mac, local, remote):
    src = ipaddress.IPv6Address(local[0]).packed
    dst = ipaddress.IPv6Address(remote[0]).packed
    data = payload(32)
    good = udp_body(src, dst, local[1], remote[1], data)
    if kind == "good":
        return frame(dst_mac, src_mac, src, dst, 17, good)
    if kind == "bad-csum":
        b = bytearray(good)
        b[10] ^= 1
        return frame(dst_mac, src_mac, src, dst, 17, bytes(b))
    if kind == "zero-csum":
        return frame(dst_mac, src_mac, src, dst, 17, udp_body(src, dst, local[1], remote[1], data, check=0))
    if kind == "truncated":
        return frame(dst_mac, src_mac, src, dst, 17, good, plen=len(good) + 16)
    if kind == "long-udp":
        return frame(dst_mac, src_mac, src, dst, 17, udp_body(src, dst, local[1], remote[1], data, ulen=len(good) + 8))
    if kind == "hop-by-hop":
        # next header UDP, length 0 (8 bytes), a PadN option of 4 bytes
        return frame(dst_mac, src_mac, src, dst, 0, bytes([17, 0, 1, 4, 0, 0, 0, 0]) + good)
    if kind == "fragment":
        # next header UDP, offset 0, M set: the first fragment
        return frame(dst_mac, src_mac, src, dst, 44, struct.pack("!BBHI", 17, 0, 1, 0x1234) + good)
    if kind in ("src-group", "src-loopback", "src-mapped"):
        src = ipaddress.IPv6Address({"src-group": "ff02::1", "src-loopback": "::1",
                                     "src-mapped": "::ffff:10.0.0.1"}[kind]).packed
        return frame(dst_mac, src_mac, src, dst, 17, udp_body(src, dst, local[1], remote[1], data))
    if kind in ("ns-hop254", "ns-bad-csum"):
        group = ipaddress.IPv6Address("ff02::1:ff00:0").packed[:13] + dst[13:]
        ns = bytearray(struct.pack("!BBHI", 135, 0, 0, 0) + dst + bytes([1, 1]) + src_mac)
        c = l4_csum(src, group, 58, bytes(ns))
        if kind == "ns-bad-csum":
            c ^= 0x100
        ns[2:4] = struct.pack("!H", c)
        mac = b"\x33\x33" + group[12:]
        return frame(mac, src_mac, src, group, 58, bytes(ns), hop=254 if kind == "ns-hop254" else 255)
    raise SystemExit("unknown --kind " + kind)


stop = False


def on_stop(*_):
    global stop
    stop = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["echo", "sizes", "inject"])
    ap.add_argument("iface", nargs="?")
    ap.add_argument("--local", type=addr_port, required=True)
    ap.add_argument("--remote", type=addr_port)
    ap.add_argument("--max", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--dst-mac")
    ap.add_argument("--send", action="append", default=[])
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, on_stop)
    deadline = time.monotonic() + a.timeout

    if a.mode == "inject":
        if not a.iface or not a.dst_mac or not a.send:
            ap.error("inject needs IFACE, --dst-mac and --send")
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((a.iface, 0))
        src_mac = s.getsockname()[4]
        for spec in a.send:
            kind, count, remote = spec.split(",", 2)
            f = build(kind, bytes.fromhex(a.dst_mac.replace(":", "")), src_mac, a.local,
                      addr_port(remote))
            for _ in range(int(count)):
                s.send(f)
            print("injected %s %s" % (count, kind))
        return 0

    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(a.local)
    if a.mode == "echo":
        print("ready kernel", flush=True)
        echoed = 0
        s.settimeout(0.1)
        while not stop and time.monotonic() < deadline:
            try:
                data, peer = s.recvfrom(65535)
            except socket.timeout:
                continue
            s.sendto(data, peer)
            echoed += 1
        print("echo echoed=%d" % echoed)
        return 0

    if not a.remote or not a.max:
        ap.error("sizes needs --remote and --max")
    s.connect(a.remote)
    for n in size_sweep(a.max):
        msg = payload(n)
        ok = False
        for _ in range(3):
            s.send(msg)
            until = time.monotonic() + 1.0
            while not ok and time.monotonic() < until:
                s.settimeout(max(0.01, until - time.monotonic()))
                try:
                    got = s.recv(65535)
                except (socket.timeout, ConnectionRefusedError):
                    continue
                ok = got == msg
            if ok:
                break
        if not ok or time.monotonic() > deadline or stop:
            print("sizes failed at %d" % n)
            return 1
    print("sizes ok %d" % a.max)
    return 0


if __name__ == "__main__":
    sys.exit(main())
