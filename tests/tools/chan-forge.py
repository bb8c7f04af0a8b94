#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""chan-forge.py - forged frames for a routable channel (U-Net inside
UDP/IPv4 or UDP/IPv6, docs/wire-format.md), sent raw on a device with
AF_PACKET, so that source address, source port and every header field are
whatever the test says.  Only for the test's own namespaces (chan_spoof in
t_chan.sh, rchan6 in t_rchan6.sh).

    chan-forge.py IFACE DST_MAC SRC_IP DST_IP SPORT DPORT DST_TAG SRC_TAG COUNT [--csum N] [--mf]

IPv6 when the addresses are (a colon): the UDP checksum is computed
unless --csum N gives it (--csum 0: none, which IPv6 forbids); --mf has no
meaning there.  Sends COUNT frames with a 32-byte payload; prints "sent
COUNT"."""
import socket
import struct
import sys


def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(src_mac, dst_mac, saddr, daddr, sport, dport, dst_tag, src_tag, csum, mf):
    payload = bytes(range(0x30, 0x50))
    unet = struct.pack("!BBHHH", 1, 0, dst_tag, src_tag, len(payload)) + payload
    udp = struct.pack("!HHHH", sport, dport, 8 + len(unet), csum) + unet
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x2000 if mf else 0x4000,
                     64, 17, 0, socket.inet_aton(saddr), socket.inet_aton(daddr))
    ip = ip[:10] + struct.pack("!H", ip_csum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + udp


def sum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def frame6(src_mac, dst_mac, saddr, daddr, sport, dport, dst_tag, src_tag, csum):
    payload = bytes(range(0x30, 0x50))
    unet = struct.pack("!BBHHH", 1, 0, dst_tag, src_tag, len(payload)) + payload
    ulen = 8 + len(unet)
    src, dst = socket.inet_pton(socket.AF_INET6, saddr), socket.inet_pton(socket.AF_INET6, daddr)
    if csum is None:
        pseudo = src + dst + struct.pack("!IxxxB", ulen, 17)
        udp0 = struct.pack("!HHHH", sport, dport, ulen, 0) + unet
        csum = ~sum16(pseudo + udp0) & 0xFFFF or 0xFFFF
    udp = struct.pack("!HHHH", sport, dport, ulen, csum) + unet
    ip6 = struct.pack("!IHBB16s16s", 6 << 28, ulen, 17, 64, src, dst)
    return dst_mac + src_mac + b"\x86\xdd" + ip6 + udp


def main():
    a = sys.argv[1:]
    if len(a) < 9:
        sys.exit(__doc__)
    ifname, dst_mac = a[0], bytes.fromhex(a[1].replace(":", ""))
    saddr, daddr = a[2], a[3]
    sport, dport, dst_tag, src_tag, count = (int(x) for x in a[4:9])
    csum = int(a[a.index("--csum") + 1]) if "--csum" in a else None
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    src_mac = s.getsockname()[4]
    if ":" in saddr:
        f = frame6(src_mac, dst_mac, saddr, daddr, sport, dport, dst_tag, src_tag, csum)
    else:
        f = frame(src_mac, dst_mac, saddr, daddr, sport, dport, dst_tag, src_tag, csum or 0,
                  "--mf" in a)
    for _ in range(count):
        s.send(f)
    print("sent", count)


main()
