# SPDX-License-Identifier: BSD-2-Clause
"""packet_capture.py - what the capture tools (chan6-capture.py,
csum-capture.py) share: their --timeout option, and the frames that
arrive on an interface until SIGTERM or the timeout: imported from the
tools' own directory."""
import signal
import socket
import struct
import time

SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
# struct tpacket_auxdata: tp_status, tp_len, tp_snaplen, tp_mac, tp_net,
# tp_vlan_tci, tp_vlan_tpid.
AUX = struct.Struct("=IIIHHHH")


def take_timeout(args, default=60.0):
    """The seconds of "--timeout S" in args (taken out of the list), or
    default."""
    if "--timeout" not in args:
        return default
    i = args.index("--timeout")
    timeout = float(args[i + 1])
    del args[i:i + 2]
    return timeout


def arriving(ifname, ethertype, timeout, auxdata=False):
    """Yields (frame, tp_status) for each frame of ethertype (ETH_P_ALL:
    any) that arrives on ifname, what ifname sends left out; tp_status is
    the packet's auxiliary data's (auxdata), else 0.  Prints "ready" once
    the socket is open; ends on SIGTERM or at the timeout."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
    if auxdata:
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
        except (socket.timeout, InterruptedError):
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        status = 0
        for level, kind, data in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= AUX.size:
                status = AUX.unpack(data[:AUX.size])[0]
        yield frame, status
