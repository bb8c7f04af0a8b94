#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp6-hostile.py - crafted IPv6/TCP frames for the TCP/IPv6 tests.

  tcp6-hostile.py IFACE --dst-mac MAC --local [ADDR]:PORT \\
      --send KIND,COUNT,[ADDR]:PORT ...

Sends COUNT frames of each KIND from IFACE (a raw socket) to the address
and port, from --local.  Every segment is a bare ACK to no connection;
each KIND breaks one thing (docs/tcp.md, "IPv6"):

  good          correct (the layer hands it to lwIP, which resets it)
  bad-csum      one bit of the TCP checksum flipped
  truncated     payload length 16 bytes past the frame
  short         payload length 19 (below a TCP header)
  doff-low      data offset 4 words
  hop-by-hop    a hop-by-hop options header before TCP
  fragment      a fragment header (the first fragment) before TCP
  src-group, src-loopback, src-mapped   sources no host has
  src-self      the destination's own address as the source
Prints "injected COUNT KIND" for each.

  --fuzz SEED,COUNT,[ADDR]:PORT   COUNT seeded random segments to the
      port: sources among the peer's, others of the prefix, ::, ::1, a
      group, a v4-mapped one, link-local ones and the destination's own;
      random ports, flags, sequence and acknowledgement numbers, data
      offsets, options and data; the checksum right 4 times in 5, the
      payload length right 9 times in 10.  Prints "fuzzed COUNT seed SEED".
"""
import argparse
import ipaddress
import random
import socket
import struct


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


def tcp(src, dst, sport, dport, doff=5):
    t = bytearray(struct.pack("!HHIIBBHHH", sport, dport, 0x1000, 0x2000, doff << 4, 0x10,
                              0xFFFF, 0, 0))
    ph = src + dst + struct.pack("!IxxxB", len(t), 6)
    t[16:18] = struct.pack("!H", (~csum(ph + bytes(t))) & 0xFFFF)
    return bytes(t)


def frame(dst_mac, src_mac, src, dst, nh, body, plen=None):
    ip = struct.pack("!IHBB", 6 << 28, len(body) if plen is None else plen, nh, 64) + src + dst
    return dst_mac + src_mac + b"\x86\xdd" + ip + body


def build(kind, dst_mac, src_mac, local, remote):
    src = ipaddress.IPv6Address(local[0]).packed
    dst = ipaddress.IPv6Address(remote[0]).packed
    if kind in ("src-group", "src-loopback", "src-mapped"):
        src = ipaddress.IPv6Address({"src-group": "ff02::1", "src-loopback": "::1",
                                     "src-mapped": "::ffff:10.0.0.1"}[kind]).packed
    if kind == "src-self":
        src = dst
    good = tcp(src, dst, local[1], remote[1])
    if kind in ("good", "src-group", "src-loopback", "src-mapped", "src-self"):
        return frame(dst_mac, src_mac, src, dst, 6, good)
    if kind == "bad-csum":
        b = bytearray(good)
        b[17] ^= 1
        return frame(dst_mac, src_mac, src, dst, 6, bytes(b))
    if kind == "truncated":
        return frame(dst_mac, src_mac, src, dst, 6, good, plen=len(good) + 16)
    if kind == "short":
        return frame(dst_mac, src_mac, src, dst, 6, good, plen=19)
    if kind == "doff-low":
        return frame(dst_mac, src_mac, src, dst, 6, tcp(src, dst, local[1], remote[1], doff=4))
    if kind == "hop-by-hop":
        return frame(dst_mac, src_mac, src, dst, 0, bytes([6, 0, 1, 4, 0, 0, 0, 0]) + good)
    if kind == "fragment":
        return frame(dst_mac, src_mac, src, dst, 44, struct.pack("!BBHI", 6, 0, 1, 0x1234) + good)
    raise SystemExit("unknown kind " + kind)


def fuzz(seed, count, dst_mac, src_mac, local, remote, send):
    rng = random.Random(seed)
    dst = ipaddress.IPv6Address(remote[0]).packed
    peer = ipaddress.IPv6Address(local[0]).packed
    odd = [ipaddress.IPv6Address(a).packed for a in
           ("::", "::1", "ff02::1", "::ffff:10.0.0.1", "fe80::1", "fe80::2")]
    for _ in range(count):
        r = rng.random()
        if r < 0.4:
            src = peer
        elif r < 0.7:
            src = dst[:8] + rng.randbytes(8)
        elif r < 0.8:
            src = dst
        else:
            src = rng.choice(odd)
        sport = local[1] if rng.random() < 0.5 else rng.randrange(65536)
        doff = rng.randrange(5, 16)
        opts = rng.randbytes((doff - 5) * 4)
        data = rng.randbytes(rng.choice((0, 0, 1, rng.randrange(1, 200))))
        t = bytearray(struct.pack("!HHIIBBHHH", sport, remote[1], rng.getrandbits(32),
                                  rng.getrandbits(32), doff << 4, rng.getrandbits(8),
                                  rng.getrandbits(16), 0, rng.getrandbits(16)) + opts + data)
        if rng.random() < 0.1:
            t[12] = rng.getrandbits(8)
        ph = src + dst + struct.pack("!IxxxB", len(t), 6)
        c = (~csum(ph + bytes(t))) & 0xFFFF
        t[16:18] = struct.pack("!H", c if rng.random() < 0.8 else rng.getrandbits(16))
        plen = len(t) if rng.random() < 0.9 else rng.randrange(65536)
        send(frame(dst_mac, src_mac, src, dst, 6, bytes(t), plen=plen))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--local", type=addr_port, required=True)
    ap.add_argument("--send", action="append", default=[])
    ap.add_argument("--fuzz", default=None)
    a = ap.parse_args()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    src_mac = s.getsockname()[4][:6]
    dst_mac = bytes.fromhex(a.dst_mac.replace(":", ""))
    for spec in a.send:
        kind, count, to = spec.split(",", 2)
        f = build(kind, dst_mac, src_mac, a.local, addr_port(to))
        for _ in range(int(count)):
            s.send(f)
        print("injected %s %s" % (count, kind), flush=True)
    if a.fuzz:
        seed, count, to = a.fuzz.split(",", 2)
        fuzz(int(seed, 0), int(count), dst_mac, src_mac, a.local, addr_port(to), s.send)
        print("fuzzed %s seed %s" % (count, seed), flush=True)


if __name__ == "__main__":
    main()
