#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tool.py - the teardown review's attacker (README.md here).

  tool.py --socket PATH --uid UID cycle --netns P --devs N [--seconds S] [--count C]
  tool.py --socket PATH --uid UID hold --netns P --devs N [--seconds S]

As UID, on one connection: an emulated endpoint on uq0, EP_DESTROY it,
then uq1, ... uq(N-1), round and round, in the namespace P, for at most
S seconds and C endpoints.  Each destroy is the interface's last
endpoint: its teardown is queued (daemon/teardown.c), and its device is
set up again only N endpoints later.  Prints "cycled K seconds T".
hold: an endpoint on each of uq0..uq(N-1) on one connection, then
"held N" and hold them S seconds.  Speaks the protocol through tests/tools/unetd-attack.py's helpers.
"""
import argparse
import importlib.util
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "attack", os.path.join(HERE, "../../tests/tools/unetd-attack.py"))
A = importlib.util.module_from_spec(spec)
spec.loader.exec_module(A)


def cycle(args):
    def child():
        nsfd = os.open(args.netns, os.O_RDONLY)
        s = A.connect(args.socket)
        t0 = time.monotonic()
        made = 0
        for i in range(args.count):
            if time.monotonic() - t0 > args.seconds:
                break
            dev = "uq%d" % (i % args.devs)
            ans = A.ep_create_in(s, dev, nsfd)
            if not ans.startswith("granted"):
                print("endpoint %d on %s: %s" % (i, dev, ans))
                break
            # ep_create_in drops the reply; the endpoint id is the
            # client's only one: ask for the list is not needed, the
            # daemon numbers them; destroy by hanging up instead.
            s.close()
            s = A.connect(args.socket)
            made += 1
        s.close()
        print("cycled %d seconds %.1f" % (made, time.monotonic() - t0))
        return 0
    return A.in_child(args, child)


def hold(args):
    def child():
        nsfd = os.open(args.netns, os.O_RDONLY)
        s = A.connect(args.socket)
        for i in range(args.devs):
            ans = A.ep_create_in(s, "uq%d" % i, nsfd)
            if not ans.startswith("granted"):
                print("endpoint on uq%d: %s" % (i, ans))
                return 1
        print("held %d" % args.devs)
        sys.stdout.flush()
        time.sleep(args.seconds)
        return 0
    return A.in_child(args, child)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--uid", type=int, required=True)
    ap.add_argument("attack", choices=["cycle", "hold"])
    ap.add_argument("--netns", required=True)
    ap.add_argument("--devs", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--count", type=int, default=2000)
    args = ap.parse_args()
    args.groups = []
    sys.exit(cycle(args) if args.attack == "cycle" else hold(args))


if __name__ == "__main__":
    main()
