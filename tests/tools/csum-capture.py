#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""csum-capture.py - how the checksums of the UDP or TCP frames arriving
on an interface stand, as the receiving kernel got them.

    csum-capture.py IFACE udp|tcp PORT [--timeout S]

Counts the IPv4 frames of that protocol to (or from) PORT that arrive on
IFACE (an AF_PACKET socket; what IFACE sends is left out), by the state of their transport checksum:

  full     the checksum verifies over the whole segment;
  partial  the field holds exactly the pseudo-header sum AND the kernel
           marks the frame CHECKSUM_PARTIAL (TP_STATUS_CSUMNOTREADY in the
           packet's auxiliary data): a sum the sender asked the device for,
           that veth hands on unfinished, as it does for kernel senders;
  bad      anything else (a partial-looking field the kernel does not
           mark as partial counts here too).

Prints "ready" once the socket is open, and on SIGTERM or at the timeout
"capture frames=N full=N partial=N bad=N".  Exit 0.
"""
import signal
import socket
import struct
import sys
import time

from inet_csum import csum_add

ETH_P_IP = 0x0800
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_CSUMNOTREADY = 1 << 3
PACKET_OUTGOING = 4
# struct tpacket_auxdata: tp_status, tp_len, tp_snaplen, tp_mac, tp_net,
# tp_vlan_tci, tp_vlan_tpid.
AUX = struct.Struct("=IIIHHHH")


def folded(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def classify(frame, status, proto, port):
    """'full', 'partial', 'bad', or None for a frame that is not ours."""
    if len(frame) < 34 or struct.unpack("!H", frame[12:14])[0] != ETH_P_IP:
        return None
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != proto or len(ip) < ihl + 8:
        return None
    tot = struct.unpack("!H", ip[2:4])[0]
    seg = ip[ihl:tot]
    sport, dport = struct.unpack("!HH", seg[:4])
    if port not in (sport, dport):
        return None
    pseudo = csum_add(ip[12:20]) + proto + len(seg)
    field_at = 6 if proto == socket.IPPROTO_UDP else 16
    field = struct.unpack("!H", seg[field_at:field_at + 2])[0]
    if folded(csum_add(seg, pseudo)) == 0xFFFF:
        return "full"
    if field == folded(pseudo) and status & TP_STATUS_CSUMNOTREADY:
        return "partial"
    return "bad"


def main():
    args = sys.argv[1:]
    timeout = 60.0
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3 or args[1] not in ("udp", "tcp"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ifname, proto, port = args[0], args[1], int(args[2])
    proto = socket.IPPROTO_UDP if proto == "udp" else socket.IPPROTO_TCP
    counts = {"full": 0, "partial": 0, "bad": 0}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    # Room for a burst: what overflows is lost to the counts, not wrong.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((ifname, 0))
    s.settimeout(0.1)
    print("ready", flush=True)
    end = time.monotonic() + timeout
    while not stop and time.monotonic() < end:
        try:
            frame, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(AUX.size))
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        status = 0
        for level, kind, data in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= AUX.size:
                status = AUX.unpack(data[:AUX.size])[0]
        verdict = classify(frame, status, proto, port)
        if verdict:
            counts[verdict] += 1
    print("capture frames=%d full=%d partial=%d bad=%d" %
          (sum(counts.values()), counts["full"], counts["partial"], counts["bad"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
