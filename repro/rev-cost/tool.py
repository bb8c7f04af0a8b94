#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tool.py - clients for the request-cost review (README.md here).

Run as root; each side forks and becomes its uid.  Scenarios:

  lockout   --honest UID [--netns P]: an honest user's STATUS, one
            EP_CREATE (on --iface, in namespace --netns if given), then
            STATUS again at once: how long its next request waits for
            what the daemon charged it.
  reap      --attacker UID --attacker-netns P... --honest UID: the
            attacker holds an endpoint in each of its namespaces, runs its
            budget below zero, then closes its connection (its hang-up is
            not read while it is throttled); then the honest user does as
            in lockout.  reap_closed() inside the honest EP_CREATE frees
            the attacker's interfaces, on the honest user's clock.
  hangup    --attacker UID --attacker-netns P...: as reap's attacker
            side, then samples the daemon's CPU (--daemon-pid) for 3 s
            after the hang-up, while the honest user asks STATUS every
            10 ms.
  connflood --attacker UID [--seconds S] [--rate R] [--after A]: the
            attacker connects and hangs up in a loop (at most 20000, S
            seconds, R a second), nothing else; the daemon's CPU each
            second (and A seconds past the flood) and the honest user's
            STATUS round trips meanwhile.  --hold H: H connections are
            opened first and held (256: the per-uid cap, so every new one
            is refused, after reap_closed polls every client, uncharged).
"""
import argparse
import importlib.util
import os
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "unetd_attack", os.path.join(HERE, "..", "..", "tests", "tools", "unetd-attack.py"))
ua = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ua)


def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def timed(s, typ, body=b"", timeout=30.0, seq=1):
    t = time.monotonic()
    s.send(ua.request(typ, body, seq=seq))
    rep = ua.recv_reply(s, timeout)
    return (time.monotonic() - t) * 1e3, rep


def fork_as(uid, fn):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 1
        try:
            ua.become(uid, [])
            out = fn()
            os.write(w, out.encode())
            code = 0
        except Exception as e:
            os.write(w, ("error: %s" % e).encode())
        os._exit(code)
    os.close(w)
    out = b""
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        out += b
    os.close(r)
    os.waitpid(pid, 0)
    return out.decode()


def honest(args):
    def child():
        s = ua.connect(args.socket)
        t0, _ = timed(s, ua.REQ_STATUS)
        t = time.monotonic()
        if args.netns:
            nsfd = os.open(args.netns, os.O_RDONLY)
            ans = ua.ep_create_in(s, args.iface, nsfd)
            os.close(nsfd)
        else:
            ans = ua.ep_create(s, args.iface, 2)
        t1 = (time.monotonic() - t) * 1e3
        t2, rep = timed(s, ua.REQ_STATUS, seq=3)
        t3, rep = timed(s, ua.REQ_STATUS, seq=4)
        s.close()
        return ("honest uid %d: STATUS %.1f ms; EP_CREATE %.1f ms (%s); next STATUS %.1f ms "
                "(%s); one more %.1f ms" % (args.honest, t0, t1, ans, t2,
                                            "answered" if rep else "NO ANSWER", t3))
    return fork_as(args.honest, child)


def attacker(args):
    """Endpoints in each namespace, the budget below zero, then hang up."""
    def child():
        s = ua.connect(args.socket)
        took = []
        for p in args.attacker_netns:
            nsfd = os.open(p, os.O_RDONLY)
            t = time.monotonic()
            ans = ua.ep_create_in(s, args.attacker_iface, nsfd)
            took.append("%.1f" % ((time.monotonic() - t) * 1e3))
            os.close(nsfd)
            if not ans.startswith("granted"):
                return "attacker: endpoint in %s: %s" % (p, ans)
        # spend what is left, until a request waits (throttled)
        n = 0
        for i in range(300):
            t, rep = timed(s, ua.REQ_HELLO, timeout=0.05, seq=100 + i)
            if rep is None:
                break
            n += 1
        s.close()
        return "attacker uid %d: %d endpoints (EP_CREATE ms: %s), %d HELLO answered then " \
            "throttled, hung up" % (args.attacker, len(args.attacker_netns), " ".join(took), n)
    return fork_as(args.attacker, child)


def pinger(args, seconds):
    """The honest user asks STATUS every 10 ms for seconds (a child):
    returns a function that waits for it and gives its summary."""
    def child():
        s = ua.connect(args.socket)
        lat = []
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end and i < 5000:
            t, rep = timed(s, ua.REQ_STATUS, timeout=10.0, seq=i)
            if rep is None:
                return "honest STATUS %d: no answer in 10 s" % i
            lat.append(t)
            i += 1
            time.sleep(0.01)
        lat.sort()
        return "honest uid %d STATUS x%d: median %.2f ms, p99 %.2f ms, worst %.2f ms" % (
            args.honest, len(lat), lat[len(lat) // 2], lat[len(lat) * 99 // 100], lat[-1])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, fork_as(args.honest, child).encode())
        os._exit(0)
    os.close(w)

    def done():
        out = b""
        while True:
            b = os.read(r, 4096)
            if not b:
                break
            out += b
        os.waitpid(pid, 0)
        return out.decode()
    return done


def connflood(args):
    def child():
        n = refused = 0
        held = []
        for i in range(args.hold):
            held.append(ua.connect(args.socket))
        if args.hold:
            time.sleep(0.5)
        end = time.monotonic() + args.seconds
        start = time.monotonic()
        while time.monotonic() < end and n < 20000:
            if args.rate and n > args.rate * (time.monotonic() - start):
                time.sleep(0.001)
                continue
            try:
                s = ua.connect(args.socket)
                s.close()
            except OSError:
                refused += 1
            n += 1
        alive = 0
        for h in held:
            h.setblocking(False)
            try:
                alive += h.recv(1) != b""
            except BlockingIOError:
                alive += 1
            except OSError:
                pass
        return "attacker uid %d: %d connections made and closed (%d failed) in %.0f s; " \
            "%d held (%d still open)" % (args.attacker, n, refused, args.seconds, len(held), alive)
    return fork_as(args.attacker, child)


def cpu_each_second(pid, n):
    out = []
    for _ in range(n):
        a = cpu(pid)
        time.sleep(1)
        out.append("%.0f%%" % ((cpu(pid) - a) * 100))
    return "daemon CPU each second: " + " ".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["lockout", "reap", "hangup", "connflood"])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--iface", default="")
    ap.add_argument("--netns", default="")
    ap.add_argument("--honest", type=int, default=65533)
    ap.add_argument("--attacker", type=int, default=65534)
    ap.add_argument("--attacker-netns", nargs="*", default=[])
    ap.add_argument("--attacker-iface", default="uq0")
    ap.add_argument("--daemon-pid", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rate", type=float, default=0, help="connflood: connections a second (0: as fast as it can)")
    ap.add_argument("--hold", type=int, default=0, help="connflood: connections held open first")
    ap.add_argument("--after", type=int, default=0, help="connflood: seconds of CPU sampling past the flood")
    args = ap.parse_args()
    if args.scenario == "lockout":
        print(honest(args))
    elif args.scenario == "reap":
        print(attacker(args))
        time.sleep(0.05)
        print(honest(args))
    elif args.scenario == "hangup":
        print(attacker(args))
        done = pinger(args, 3.0)
        print("after the hang-up: " + cpu_each_second(args.daemon_pid, 3))
        print(done())
    else:
        print("before: " + cpu_each_second(args.daemon_pid, 1))
        done = pinger(args, args.seconds + 1)
        pid = os.fork()
        if pid == 0:
            print(connflood(args))
            sys.stdout.flush()
            os._exit(0)
        print("during: " + cpu_each_second(args.daemon_pid, int(args.seconds)))
        os.waitpid(pid, 0)
        if args.after:
            print("after the flood: " + cpu_each_second(args.daemon_pid, args.after))
        print(done())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
