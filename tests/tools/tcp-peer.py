#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp-peer.py - the kernel's side of the TCP over U-Net tests (kernel sockets).

  tcp-peer.py echo   ADDR:PORT [--conns N]   echo server (a thread per connection)
  tcp-peer.py sink   ADDR:PORT [--conns N]   read to EOF, check the pattern, answer "<bytes>\\n"
  tcp-peer.py sizes  ADDR:PORT [--max M]     the write sizes of unet-tcp sizes, echoed, compared
  tcp-peer.py source ADDR:PORT --bytes N     send N pattern bytes, shutdown, expect "<N>\\n"
  tcp-peer.py rr     ADDR:PORT --count N     64-byte round trips, prints p50/p99
Servers print "ready port=P".  Byte i of a stream is (i + seed) % 251, seed 0.
"""
import argparse
import socket
import sys
import threading
import time

PERIOD = 251
PAT = bytes(i % PERIOD for i in range(PERIOD * 1100))  # > 256 KiB + 251


def pat(off, n):
    """n pattern bytes starting at stream offset off (n <= 256 KiB)."""
    s = off % PERIOD
    return PAT[s:s + n]


def addr(s):
    a, p = s.rsplit(":", 1)
    return a, int(p)


def recv_exact(c, n):
    b = bytearray()
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise EOFError("peer closed after %d of %d bytes" % (len(b), n))
        b += d
    return bytes(b)


def serve(a, conns, handler):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(a)
    ls.listen(1024)
    print("ready port=%d" % a[1], flush=True)
    threads = []
    n = 0
    while conns == 0 or n < conns:
        c, _ = ls.accept()
        t = threading.Thread(target=handler, args=(c,), daemon=True)
        t.start()
        threads.append(t)
        n += 1
    for t in threads:
        t.join()


def echo_conn(c):
    with c:
        while True:
            try:
                d = c.recv(65536)
            except ConnectionError:
                return
            if not d:
                return
            c.sendall(d)


sink_total = [0, 0, 0]


def mss_of(c):
    """(snd_mss, rcv_mss) of the socket's struct tcp_info: the MSS it
    sends with, and the largest segment it has seen come in."""
    import struct
    i = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return struct.unpack_from("8B24I", i)[10:12] if len(i) >= 104 else (0, 0)


def sink_conn(c):
    off = 0
    bad = False
    with c:
        while True:
            d = c.recv(262144)
            if not d:
                break
            if not bad and d != pat(off, len(d)):
                bad = True
            off += len(d)
        rcv_mss = mss_of(c)[1]
        c.sendall(b"%d%s\n" % (off, b" bad" if bad else b""))
    sink_total[0] += off
    sink_total[1] += bad
    sink_total[2] = max(sink_total[2], rcv_mss)


def sizes(a, mx):
    c = socket.create_connection(a, timeout=30)
    off, size, count = 0, 1, 0
    while size <= mx:
        out = pat(off, size) if size <= 262144 else None
        c.sendall(out)
        back = recv_exact(c, size)
        if back != out:
            sys.exit("size %d: echo differs" % size)
        off += size
        count += 1
        if size < 2048:
            size += 1
        elif size < mx:
            size = min(mx, size + 997)
        else:
            break
    c.close()
    print("sizes ok %d sizes 1..%d bytes=%d" % (count, mx, off))


def tcp_info(c):
    """Fields of the socket's struct tcp_info (linux/tcp.h), as text: what
    its loss recovery was doing (backoff, reordering: docs/tcp.md)."""
    import struct
    i = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    if len(i) < 104:
        return "(short tcp_info)"
    (state, ca_state, retransmits, probes, backoff, _opt, _ws, _app, rto, ato, snd_mss,
     rcv_mss, unacked, sacked, lost, retrans, _fack, last_data_sent, _las, last_data_recv,
     last_ack_recv, pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, _advmss,
     reordering, _rcv_rtt, _rcv_space, total_retrans) = struct.unpack_from("8B24I", i)
    return ("state=%d ca_state=%d retransmits=%d probes=%d backoff=%d rto_us=%d unacked=%d "
            "lost=%d retrans=%d last_data_sent_ms=%d last_ack_recv_ms=%d rtt_us=%d "
            "snd_cwnd=%d snd_ssthresh=%d reordering=%d total_retrans=%d" %
            (state, ca_state, retransmits, probes, backoff, rto, unacked, lost, retrans,
             last_data_sent, last_ack_recv, rtt, snd_cwnd, snd_ssthresh, reordering,
             total_retrans))


def source(a, n):
    c = socket.create_connection(a, timeout=60)
    t0 = time.monotonic()
    off = 0
    while off < n:
        k = min(65536, n - off)
        try:
            c.sendall(pat(off, k))
        except socket.timeout:
            # A stall: what the kernel's sender was doing (evidence).
            print("stalled at byte %d of %d: %s" % (off, n, tcp_info(c)), file=sys.stderr)
            raise
        off += k
    c.shutdown(socket.SHUT_WR)
    ans = b""
    while True:
        d = c.recv(64)
        if not d:
            break
        ans += d
    dt = time.monotonic() - t0
    if ans.strip() != b"%d" % n:
        sys.exit("source: sent %d, peer says %r" % (n, ans))
    print("source ok bytes=%d MBps=%.1f snd_mss=%d tcp_info: %s" %
          (n, n / dt / 1e6, mss_of(c)[0], tcp_info(c)))


def rr(a, count, size):
    c = socket.create_connection(a, timeout=30)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msg = b"r" * size
    ts = []
    for i in range(count + 100):
        t0 = time.perf_counter_ns()
        c.sendall(msg)
        recv_exact(c, size)
        if i >= 100:
            ts.append(time.perf_counter_ns() - t0)
    ts.sort()
    print("rr count=%d size=%d p50_us=%.1f p99_us=%.1f" %
          (count, size, ts[count // 2] / 1e3, ts[count * 99 // 100] / 1e3))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode")
    p.add_argument("addr")
    p.add_argument("--conns", type=int, default=0)
    p.add_argument("--max", type=int, default=65536)
    p.add_argument("--bytes", type=int, default=0)
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--size", type=int, default=64)
    o = p.parse_args()
    a = addr(o.addr)
    if o.mode == "echo":
        serve(a, o.conns, echo_conn)
    elif o.mode == "sink":
        serve(a, o.conns, sink_conn)
        print("sink conns=%d bytes=%d bad=%d rcv_mss=%d" %
              (o.conns, sink_total[0], sink_total[1], sink_total[2]))
    elif o.mode == "sizes":
        sizes(a, o.max)
    elif o.mode == "source":
        source(a, o.bytes)
    elif o.mode == "rr":
        rr(a, o.count, o.size)
    else:
        sys.exit("unknown mode " + o.mode)


if __name__ == "__main__":
    main()
