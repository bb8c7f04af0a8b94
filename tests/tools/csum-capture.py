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
import socket
import struct
import sys

from inet_csum import csum_add
from packet_capture import arriving, take_timeout

ETH_P_IP = 0x0800
TP_STATUS_CSUMNOTREADY = 1 << 3


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
    timeout = take_timeout(args)
    if len(args) != 3 or args[1] not in ("udp", "tcp"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ifname, proto, port = args[0], args[1], int(args[2])
    proto = socket.IPPROTO_UDP if proto == "udp" else socket.IPPROTO_TCP
    counts = {"full": 0, "partial": 0, "bad": 0}
    for frame, status in arriving(ifname, ETH_P_IP, timeout, auxdata=True):
        verdict = classify(frame, status, proto, port)
        if verdict:
            counts[verdict] += 1
    print("capture frames=%d full=%d partial=%d bad=%d" %
          (sum(counts.values()), counts["full"], counts["partial"], counts["bad"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
