#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""hello_forge.py - a hostile host's HELLOs for the unet libfabric provider
(fabric_spoof in t_fabric.sh).  Only for the test's own namespaces.

    hello_forge.py CLIENT_NAME SERVER_NAME NFORGED
    hello_forge.py replay IFACE CLIENT_NAME SERVER_NAME TRIGGER

Sends to the server's setup socket, with raw IPv4 so that the source port
is whatever a name says: NFORGED HELLOs from made-up names (each its own
port), then one HELLO from the client's name (its address and port: a
spoofed datagram) with a tag of the forger's own.  Each in every form the
provider has had: the 56-byte HELLO, the 64-byte one with nonces (both
with 24-byte names of version 1) and the 96-byte one with 40-byte names
(docs/libfabric.md), so the same test runs against any of them.  Every
name is the IPv4 string form fi_av_straddr gives.

replay, run on the client's side: watches IFACE for the first HELLO the
server sends the client (its nonce for the client, as a host on the
path sees it once during setup), waits for the file TRIGGER (the pair is
up by then), sends 3 HELLOs from the client's address and name with tags
of its own that echo that nonce, and waits for the server's next HELLO to
the client, which says the server read them.  Exits 0 then, 1 if either
HELLO never came (10 s each)."""
import os
import re
import socket
import struct
import sys
import time

NAME_RE = re.compile(r"fi_unet://([0-9a-f:]{17})/ep=(\d+)/(\d+)\.(\d+)\.(\d+)\.(\d+)/(\d+):(\d+)"
                     r"/f=([0-9a-f]{2})/nonce=([0-9a-f]{8})")


def parse(s):
    m = NAME_RE.fullmatch(s.strip())
    if not m:
        sys.exit(f"hello_forge: not a name: {s!r}")
    mac = bytes(int(x, 16) for x in m.group(1).split(":"))
    ip = bytes(int(m.group(i)) for i in range(3, 7))
    return {"mac": mac, "ep": int(m.group(2)), "ip": ip, "prefix": int(m.group(7)),
            "port": int(m.group(8)), "flags": int(m.group(9), 16),
            "nonce": int(m.group(10), 16)}


def pack(n, version):
    # struct ufi_name: 'U' 'F', version, flags, mac, ep_id and port in
    # network order, ip as is, prefix, the family (version 1: a reserved
    # 0), nonce in the sender's (host) order; version 2 then 16 bytes of
    # IPv6 address, zero for an IPv4 name
    return (b"UF" + bytes([version, n["flags"]]) + n["mac"] + struct.pack(">H", n["ep"]) +
            n["ip"] + struct.pack(">HBB", n["port"], n["prefix"], 4 if version == 2 else 0) +
            struct.pack("<I", n["nonce"]) + (bytes(16) if version == 2 else b""))


def hellos(frm, to, ft):
    mine = int.from_bytes(os.urandom(4), "little") | 1
    out = []
    for version in (1, 2):
        h = b"UFIH" + pack(frm, version) + pack(to, version) + struct.pack(">HH", ft, 0)
        if version == 1:
            out.append(h)
        out.append(h + struct.pack("<II", mine, 0))
    return out


def send(sock, src_ip, sport, dst_ip, dport, payload):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(payload), 0, 0, 64, 17, 0,
                     src_ip, dst_ip)
    sock.sendto(ip + udp + payload, (socket.inet_ntoa(dst_ip), 0))


def server_hello(sn, client, server, deadline):
    """The next 96-byte HELLO from the server's setup socket to the
    client's, as seen on the client's interface, or None by deadline."""
    while time.monotonic() < deadline:
        try:
            f = sn.recv(2048)
        except socket.timeout:
            continue
        if len(f) < 14 + 20 + 8 or f[12:14] != b"\x08\x00" or f[23] != 17:
            continue
        ip = f[14:]
        hl = (ip[0] & 15) * 4
        udp = ip[hl:]
        sport, dport = struct.unpack("!HH", udp[:4])
        h = udp[8:]
        if (ip[12:16] == server["ip"] and ip[16:20] == client["ip"] and
                sport == server["port"] and dport == client["port"] and len(h) == 96 and
                h[:4] == b"UFIH"):
            return h
    return None


def replay(iface, client_s, server_s, trigger):
    client, server = parse(client_s), parse(server_s)
    sn = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    sn.bind((iface, 0))
    sn.settimeout(0.2)
    print("hello_forge replay: watching", flush=True)
    seen = server_hello(sn, client, server, time.monotonic() + 10)
    if seen is None:
        sys.exit("hello_forge replay: saw no HELLO from the server")
    nonce = struct.unpack("<I", seen[88:92])[0]
    print(f"hello_forge replay: the server's nonce for the client {nonce:#010x}", flush=True)
    deadline = time.monotonic() + 20
    while not os.path.exists(trigger):
        if time.monotonic() > deadline:
            sys.exit(f"hello_forge replay: no {trigger}")
        time.sleep(0.01)
    # what the server sent before (the rest of the setup) is not its answer
    sn.setblocking(False)
    try:
        while True:
            sn.recv(2048)
    except BlockingIOError:
        pass
    sn.settimeout(0.2)
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for k in range(3):
        h = (b"UFIH" + pack(client, 2) + pack(server, 2) + struct.pack(">HH", 0x5000 + k, 0) +
             struct.pack("<II", int.from_bytes(os.urandom(4), "little") | 1, nonce))
        send(sock, client["ip"], client["port"], server["ip"], server["port"], h)
    if server_hello(sn, client, server, time.monotonic() + 10) is None:
        sys.exit("hello_forge replay: the server never answered the replayed HELLOs")
    print("hello_forge replay: 3 HELLOs echoing it sent, the server answered", flush=True)


def main():
    if sys.argv[1] == "replay":
        replay(*sys.argv[2:6])
        return
    client, server, nforged = parse(sys.argv[1]), parse(sys.argv[2]), int(sys.argv[3])
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sent = 0
    for i in range(min(nforged, 1000)):
        fake = dict(client, mac=bytes([2, 0x66, 0, 0, i >> 8, i & 0xff]),
                    port=40000 + i, nonce=0x66000000 + i)
        for h in hellos(fake, server, 2000 + i):
            send(sock, fake["ip"], fake["port"], server["ip"], server["port"], h)
            sent += 1
    for h in hellos(client, server, 0x7777):
        send(sock, client["ip"], client["port"], server["ip"], server["port"], h)
        sent += 1
    print(f"hello_forge: {sent} datagrams sent")


main()
