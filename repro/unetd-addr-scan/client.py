#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""client.py - the two sides of the unetd address-scan reproducer.

  client.py --socket PATH --uid UID --netns NSPATH --iface IF --peer ADDR6 --count N

As UID: an emulated endpoint on IF in the namespace NSPATH (one the user
administers: its own), then N CH_OPEN_IPV6 to ADDR6 (a silent neighbour:
the daemon answers EAGAIN at once, without waiting on the network) back
to back, while a second connection asks STATUS every 10 ms.  Prints how
long the daemon took per open, and the slowest STATUS answer meanwhile:
how long the daemon's one thread was away from everyone else.
"""
import argparse
import importlib.util
import os
import select
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "unetd_attack", os.path.join(HERE, "..", "..", "tests", "tools", "unetd-attack.py"))
ua = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ua)

REQ_CH_OPEN_IPV6 = 14


def watch(path, wr):
    """STATUS every 10 ms until the parent closes its end of the pipe
    (rd is checked); writes the slowest answer in ms to wr."""
    s = ua.connect(path)
    worst = 0.0
    n = 0
    while True:
        t = time.monotonic()
        s.send(ua.request(ua.REQ_STATUS, seq=n))
        if ua.recv_reply(s, 60.0) is None:
            worst = float("inf")
            break
        worst = max(worst, time.monotonic() - t)
        n += 1
        r, _, _ = select.select([STOP[0]], [], [], 0.01)
        if r:
            break
    os.write(wr, ("%d %.1f" % (n, worst * 1e3)).encode())


def attack(args):
    ua.become(args.uid, [])
    s = ua.connect(args.socket)
    nsfd = os.open(args.netns, os.O_RDONLY)
    ans = ua.ep_create_in(s, args.iface, nsfd)
    os.close(nsfd)
    if not ans.startswith("granted"):
        print("endpoint: %s" % ans)
        return 1
    # ep_create_in keeps only the kind: ask STATUS for our handle.
    s.send(ua.request(ua.REQ_STATUS))
    rep = ua.recv_reply(s)
    ep = struct.unpack_from("=I", rep[2], struct.calcsize("=IIIIQQ"))[0]
    peer = socket.inet_pton(socket.AF_INET6, args.peer)
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        os.close(STOP[1])
        watch(args.socket, wr)
        os._exit(0)
    os.close(wr)
    os.close(STOP[0])
    time.sleep(0.1)
    worst = total = 0.0
    for i in range(args.count):
        body = struct.pack("=I16sHHHH", ep, peer, 5, 1, 0, 0)
        t = time.monotonic()
        s.send(ua.request(REQ_CH_OPEN_IPV6, body, seq=i + 2))
        rep = ua.recv_reply(s, 60.0)
        took = time.monotonic() - t
        if rep is None:
            print("open %d: no answer" % i)
            return 1
        worst = max(worst, took)
        total += took
    os.close(STOP[1])
    n, slowest = os.read(rd, 64).decode().split()
    os.waitpid(pid, 0)
    print("opens=%d mean=%.1f ms worst=%.1f ms; STATUS meanwhile: %s answers, slowest %s ms (%s)" %
          (args.count, total / args.count * 1e3, worst * 1e3, n, slowest, rep[1]))
    return 0


STOP = os.pipe()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--uid", type=int, default=65534)
    ap.add_argument("--netns", required=True)
    ap.add_argument("--iface", required=True)
    ap.add_argument("--peer", default="fd77::ffff:1")
    ap.add_argument("--count", type=int, default=20)
    args = ap.parse_args()
    sys.exit(attack(args))


if __name__ == "__main__":
    main()
