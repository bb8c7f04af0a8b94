# SPDX-License-Identifier: BSD-2-Clause
"""inet_csum.py - the Internet checksum (RFC 1071) for the test tools that
build IPv4/TCP frames by hand (tcp-isn.py, tcp-synflood.py, tcp-tiny.py):
imported from the tools' own directory."""
import struct


def csum_add(b, s=0):
    """s plus the 16-bit big-endian words of b (padded to even length)."""
    if len(b) % 2:
        b += b"\0"
    return s + sum(struct.unpack("!%dH" % (len(b) // 2), b))


def fold(s):
    """The checksum field for the running sum s: carries folded, inverted."""
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF
