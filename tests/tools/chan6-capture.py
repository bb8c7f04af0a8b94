#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""chan6-capture.py - every frame that reaches a routable IPv6 channel's
peer from the host under test, seen by the peer's kernel (no XDP program
on the peer's interface, so nothing is taken before the capture).

    chan6-capture.py IFACE PORT [--timeout S]

An AF_PACKET socket on IFACE (what IFACE sends is left out) sorts each
frame that arrives:

  kernel   the hosts' own kernel traffic: ARP, ICMPv6 (neighbour
           discovery), MLD (ICMPv6 after a hop-by-hop header), IGMP;
  chan     IPv6/UDP to PORT; "honest" among them those whose message is
           unet-forge-chan6's honest pattern ('h' + i % 7) from the first
           byte to the last;
  other    anything else: a frame that should never have left.

Prints "ready" once the socket is open, a line per chan or other frame
as it comes ("chan len=N honest=0|1", "other ethertype=0xNNNN len=N"),
and on SIGTERM or at the timeout
"capture chan=N honest=N other=N kernel=N".  Exit 0.
"""
import struct
import sys

from packet_capture import arriving, take_timeout

ETH_P_ALL = 0x0003
UNET_PAYLOAD6 = 14 + 40 + 8 + 8


def honest(msg):
    return len(msg) > 0 and all(b == ord("h") + i % 7 for i, b in enumerate(msg))


def sort(frame, port):
    """'kernel', 'chan', 'honest' or 'other'."""
    if len(frame) < 14:
        return "other"
    etype = struct.unpack("!H", frame[12:14])[0]
    if etype == 0x0806:
        return "kernel"
    if etype == 0x0800 and len(frame) >= 34 and frame[23] == 2:
        return "kernel"
    if etype != 0x86DD or len(frame) < 54:
        return "other"
    nxt = frame[20]
    if nxt == 58 or (nxt == 0 and len(frame) >= 56 and frame[54] == 58):
        return "kernel"
    if nxt != 17 or len(frame) < UNET_PAYLOAD6:
        return "other"
    if struct.unpack("!H", frame[56:58])[0] != port:
        return "other"
    plen = struct.unpack("!H", frame[68:70])[0]
    return "honest" if honest(frame[UNET_PAYLOAD6:UNET_PAYLOAD6 + plen]) else "chan"


def main():
    args = sys.argv[1:]
    timeout = take_timeout(args)
    if len(args) != 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    ifname, port = args[0], int(args[1])
    counts = {"chan": 0, "honest": 0, "other": 0, "kernel": 0}
    for frame, _ in arriving(ifname, ETH_P_ALL, timeout):
        what = sort(frame, port)
        counts[what] += 1
        if what == "honest":
            counts["chan"] += 1
            print("chan len=%d honest=1" % len(frame), flush=True)
        elif what == "chan":
            print("chan len=%d honest=0" % len(frame), flush=True)
        elif what == "other":
            print("other ethertype=0x%04x len=%d" % (struct.unpack("!H", frame[12:14])[0]
                                                     if len(frame) >= 14 else 0, len(frame)),
                  flush=True)
    print("capture chan=%d honest=%d other=%d kernel=%d" %
          (counts["chan"], counts["honest"], counts["other"], counts["kernel"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
