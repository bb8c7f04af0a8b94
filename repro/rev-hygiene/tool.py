#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tool.py - clients for the attack review of unetd's log limit and
reserved-byte checks (README.md here).

Run as root; each client forks and becomes its uid before it connects
(the daemon sees that uid through SO_PEERCRED).  Every loop is bounded
in count and time.  Scenarios:

  sweep     --uids A,B [--rounds N] [--per K] [--gap MS]: each uid in
            turn connects, sends K requests with a non-zero pad (each
            refused with EINVAL, each a log line through the user's
            bucket), hangs up; the next uid's connection sweeps the
            previous uid's record (its request budget has refilled) and
            with it its log bucket: N rounds, GAP ms apart.
  inject    --uid U [--count N]: EP_CREATE on an interface whose name is
            newlines and a forged line ("\\nunetd: error:", 15 bytes):
            refused (no such device), the refusal line carries the name.
  lifecycle: run.sh runs tests/tools/unetd-attack.py ep-cycle: an
            emulated endpoint created and destroyed in a loop (what the
            policy grants): INFO lines that no limit covered.
  manyuids  --first UID --n N [--per K]: N uids, each one connection
            with K refused requests: the per-uid limit does not bound the
            sum (a user with a subordinate uid range has 65536 uids).
"""
import argparse
import importlib.util
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "unetd_attack", os.path.join(HERE, "..", "..", "tests", "tools", "unetd-attack.py"))
ua = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ua)

REQ_EP_CREATE, REQ_EP_DESTROY, REQ_CH_OPEN = 2, 3, 4


def bad_ch_open():
    """A CH_OPEN whose pad is not zero: refused with EINVAL, a log line."""
    return struct.pack("=IHH6s2s", 0xeeeeeeee, 5, 1, b"\x02\0\0\0\0\1", b"\1\0")


def run_as(uid, fn):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            code = fn()
        except Exception as e:
            print("uid %d: error: %s" % (uid, e), file=sys.stderr)
        sys.stdout.flush()
        os._exit(code)
    return pid


def refused_burst(path, k):
    """One connection, k refused requests (answers read), hang up."""
    s = ua.connect(path)
    got = 0
    for i in range(k):
        s.send(ua.request(REQ_CH_OPEN, bad_ch_open(), seq=i + 1))
        rep = ua.recv_reply(s, 5.0)
        if rep is None:
            break
        got += rep[0] == -22
    s.close()
    return got


def sweep(args):
    uids = [int(u) for u in args.uids.split(",")]
    total = 0
    t_end = time.monotonic() + 20.0
    for r in range(args.rounds):
        for uid in uids:
            if time.monotonic() > t_end:
                break
            pid = run_as(uid, lambda: 0 if refused_burst(args.socket, args.per) == args.per else 1)
            _, st = os.waitpid(pid, 0)
            total += args.per if os.waitstatus_to_exitcode(st) == 0 else 0
            time.sleep(args.gap / 1000.0)
    print("sweep: %d rounds, uids %s, %d refused requests (EINVAL) in all" %
          (args.rounds, args.uids, total))
    return 0


def inject(args):
    name = b"\nunetd: error:"  # 14 bytes, NUL-terminated and zero-padded
    name2 = b"\n" * 15

    def child():
        s = ua.connect(args.socket)
        answers = []
        for i in range(args.count):
            body = struct.pack("=16sIIII", name if i % 2 == 0 else name2, 2, 0, 0, 0)
            s.send(ua.request(REQ_EP_CREATE, body, seq=i + 1))
            rep = ua.recv_reply(s, 5.0)
            answers.append(None if rep is None else rep[0])
        s.close()
        print("inject: %d EP_CREATE with a name of newlines, answers %s" %
              (args.count, sorted(set(answers), key=str)))
        return 0
    _, st = os.waitpid(run_as(args.uid, child), 0)
    return os.waitstatus_to_exitcode(st)


def manyuids(args):
    ok = 0
    t_end = time.monotonic() + 30.0
    for uid in range(args.first, args.first + args.n):
        if time.monotonic() > t_end:
            break
        pid = run_as(uid, lambda: 0 if refused_burst(args.socket, args.per) == args.per else 1)
        _, st = os.waitpid(pid, 0)
        ok += os.waitstatus_to_exitcode(st) == 0
    print("manyuids: %d uids from %d, %d refused requests each" % (ok, args.first, args.per))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    sub = p.add_subparsers(dest="sc", required=True)
    a = sub.add_parser("sweep")
    a.add_argument("--uids", default="65534,65533")
    a.add_argument("--rounds", type=int, default=40)
    a.add_argument("--per", type=int, default=12)
    a.add_argument("--gap", type=float, default=25)
    a = sub.add_parser("inject")
    a.add_argument("--uid", type=int, default=65534)
    a.add_argument("--count", type=int, default=10)
    a = sub.add_parser("manyuids")
    a.add_argument("--first", type=int, default=60000)
    a.add_argument("--n", type=int, default=100)
    a.add_argument("--per", type=int, default=10)
    args = p.parse_args()
    return {"sweep": sweep, "inject": inject,
            "manyuids": manyuids}[args.sc](args)


if __name__ == "__main__":
    sys.exit(main())
