#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp6-kern.py - the kernel side of the TCP/IPv6 integration tests.

  tcp6-kern.py server [ADDR]:PORT --bytes N
      accept one connection, read N bytes and check them, send N back.
  tcp6-kern.py client [ADDR]:PORT --bytes N [--local ADDR]
      connect, send N bytes, read N back and check them.

Byte i of a stream is (i * 7 + i // 251) & 0xff (unet-tcp6.c has it).
Prints "ready kernel" once listening, then "ok N mss=M".  Exit 0 on success.
"""
import argparse
import socket
import sys


def pattern(start, n):
    return bytes(((i * 7 + i // 251) & 0xFF) for i in range(start, start + n))


def split(s):
    addr, port = s.rsplit(":", 1)
    return addr.strip("[]"), int(port)


def recv_check(s, n):
    got = 0
    while got < n:
        b = s.recv(min(65536, n - got))
        if not b:
            sys.exit(f"end of stream at {got}")
        if b != pattern(got, len(b)):
            sys.exit(f"wrong bytes at {got}")
        got += len(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["server", "client"])
    p.add_argument("addr")
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--local", default=None)
    p.add_argument("--timeout", type=float, default=15)
    a = p.parse_args()
    addr, port = split(a.addr)
    if a.mode == "server":
        ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((addr, port))
        ls.listen(1)
        ls.settimeout(a.timeout)
        print("ready kernel", flush=True)
        s, _ = ls.accept()
        s.settimeout(a.timeout)
        recv_check(s, a.bytes)
        s.sendall(pattern(0, a.bytes))
    else:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.settimeout(a.timeout)
        if a.local:
            s.bind((a.local, 0))
        s.connect((addr, port))
        s.sendall(pattern(0, a.bytes))
        recv_check(s, a.bytes)
    mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    s.close()
    print(f"ok {a.bytes} mss={mss}", flush=True)


if __name__ == "__main__":
    main()
