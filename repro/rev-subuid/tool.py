#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tool.py - clients for the attack review of unetd's subordinate-uid
accounting (README.md here).  Run as root; each client forks and takes
its uid before it connects.  Every loop is bounded in count and time.

  capshare --hog UID --n N --victim UID [--hold S]: UID hog opens N
      connections (each confirmed by an answered WHOAMI) and holds them;
      then the victim uid connects and asks WHOAMI.  Prints
      "hog N/N accepted; victim answered|refused".
  budget --hog UID --victim UID [--seconds S]: hog floods WHOAMI for S
      seconds (bounded: at most 20000 requests); meanwhile the victim
      asks 50 WHOAMI, one every 20 ms; prints the victim's worst reply
      latency in ms.
"""
import argparse
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "unetd_attack", os.path.join(HERE, "..", "..", "tests", "tools", "unetd-attack.py"))
ua = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ua)


def become(uid):
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def whoami(s, seq, timeout=3.0):
    try:
        s.send(ua.request(ua.REQ_WHOAMI, ua.whoami_body(), seq=seq))
    except OSError:
        return None
    return ua.recv_reply(s, timeout)


def capshare(a):
    r, w = os.pipe()
    hog = os.fork()
    if hog == 0:
        os.close(r)
        become(a.hog)
        socks, ok = [], 0
        for i in range(a.n):
            try:
                s = ua.connect(a.socket)
            except OSError:
                break
            socks.append(s)
            ok += whoami(s, i + 1) is not None
        os.write(w, b"%d\n" % ok)
        time.sleep(a.hold)
        os._exit(0)
    os.close(w)
    ok = int(os.read(r, 64) or b"0")
    victim = os.fork()
    if victim == 0:
        become(a.victim)
        try:
            s = ua.connect(a.socket)
            rep = whoami(s, 1)
        except OSError:
            rep = None
        print("hog uid %d: %d/%d connections accepted; victim uid %d: %s" %
              (a.hog, ok, a.n, a.victim, "answered" if rep is not None else "refused"))
        sys.stdout.flush()
        os._exit(0 if rep is not None else 3)
    _, st = os.waitpid(victim, 0)
    os.kill(hog, 9)
    os.waitpid(hog, 0)
    return os.waitstatus_to_exitcode(st)


def budget(a):
    hog = os.fork()
    if hog == 0:
        become(a.hog)
        s = ua.connect(a.socket)
        end = time.monotonic() + a.seconds
        n = 0
        while time.monotonic() < end and n < 20000:
            n += 1
            if whoami(s, n, 2.0) is None:
                break
        os._exit(0)
    time.sleep(0.3)
    victim = os.fork()
    if victim == 0:
        become(a.victim)
        s = ua.connect(a.socket)
        worst = 0.0
        for i in range(50):
            t = time.monotonic()
            if whoami(s, i + 1, 3.0) is None:
                worst = 3000.0
                break
            worst = max(worst, (time.monotonic() - t) * 1000)
            time.sleep(0.02)
        print("victim uid %d while uid %d floods: worst WHOAMI reply %.1f ms" %
              (a.victim, a.hog, worst))
        sys.stdout.flush()
        os._exit(0)
    os.waitpid(victim, 0)
    os.kill(hog, 9)
    os.waitpid(hog, 0)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capshare")
    c.add_argument("--hog", type=int, required=True)
    c.add_argument("--victim", type=int, required=True)
    c.add_argument("--n", type=int, default=256)
    c.add_argument("--hold", type=float, default=10.0)
    b = sub.add_parser("budget")
    b.add_argument("--hog", type=int, required=True)
    b.add_argument("--victim", type=int, required=True)
    b.add_argument("--seconds", type=float, default=3.0)
    a = p.parse_args()
    sys.exit(capshare(a) if a.cmd == "capshare" else budget(a))


if __name__ == "__main__":
    main()
