#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp6-tiny-mss.py IFACE DST_MAC SRC DST PORT MSS - a peer that offers a
tiny MSS in its SYN to a TCP/IPv6 listener, then sends 200 bytes the
server echoes, and acknowledges what comes for a few seconds.  Prints the
SYN-ACK's MSS option and the sizes of the server's data segments:
"synack_mss M sizes S1,S2,..." (exit 1 without a SYN-ACK).  One
connection, a few dozen frames, bounded to about 6 s.  SRC must be an
address the sender's own kernel does not have (so it sends no resets).
"""
import sys
import time

from scapy.all import AsyncSniffer, Ether, IPv6, TCP, conf, sendp

conf.verb = 0
ifn, mac, src, dst, port, mss = sys.argv[1:7]
port, mss, sport = int(port), int(mss), 45000
base = Ether(dst=mac) / IPv6(src=src, dst=dst)
pkts = []  # filled as they come (AsyncSniffer.results exists only after stop)
sn = AsyncSniffer(iface=ifn, lfilter=lambda q: TCP in q and q[TCP].dport == sport,
                  prn=pkts.append, store=False)
sn.start()
time.sleep(0.3)
sendp(base / TCP(sport=sport, dport=port, flags="S", seq=100, window=65535,
                 options=[("MSS", mss)]), iface=ifn)


def seen():
    return list(pkts)


synack = None
t0 = time.time()
while time.time() - t0 < 3 and synack is None:
    time.sleep(0.1)
    synack = next((q for q in seen() if q[TCP].flags & 0x12 == 0x12), None)
if synack is None:
    sn.stop()
    print("no SYN-ACK")
    sys.exit(1)
ack = synack[TCP].seq + 1
data = bytes((i * 7) & 0xff for i in range(200))
sendp(base / TCP(sport=sport, dport=port, flags="A", seq=101, ack=ack, window=65535), iface=ifn)
sendp(base / TCP(sport=sport, dport=port, flags="PA", seq=101, ack=ack, window=65535) / data,
      iface=ifn)
rcv = ack
t0 = time.time()
while time.time() - t0 < 3:
    time.sleep(0.2)
    for q in seen():
        n = len(q[TCP].payload)
        if n:
            rcv = max(rcv, q[TCP].seq + n)
    sendp(base / TCP(sport=sport, dport=port, flags="A", seq=301, ack=rcv, window=65535),
          iface=ifn)
    if rcv - ack >= 200:
        break
sn.stop()
sizes = sorted({len(q[TCP].payload) for q in pkts if len(q[TCP].payload)})
synmss = [o[1] for o in synack[TCP].options if o[0] == "MSS"]
print("synack_mss %s sizes %s" % (synmss[0] if synmss else 0, ",".join(map(str, sizes)) or "-"))
