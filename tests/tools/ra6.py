#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""ra6.py IFACE PREFIX: what any host on a link may send, one router
advertisement with a prefix-information option (on-link, autonomous)
for PREFIX/64 and router lifetime 0 (not a default router): every host
on the link that takes advertisements makes itself an address in it."""
import sys

from scapy.all import Ether, IPv6, ICMPv6ND_RA, ICMPv6NDOptPrefixInfo, get_if_hwaddr, sendp
from scapy.layers.inet6 import ICMPv6NDOptSrcLLAddr

ifname, prefix = sys.argv[1], sys.argv[2]
mac = get_if_hwaddr(ifname)
ra = (Ether(src=mac, dst="33:33:00:00:00:01") / IPv6(src="fe80::bad", dst="ff02::1", hlim=255) /
      ICMPv6ND_RA(routerlifetime=0) / ICMPv6NDOptSrcLLAddr(lladdr=mac) /
      ICMPv6NDOptPrefixInfo(prefix=prefix, prefixlen=64, L=1, A=1, validlifetime=3600,
                            preferredlifetime=3600))
sendp(ra, iface=ifname, count=1, verbose=False)
print("sent an advertisement of", prefix)
