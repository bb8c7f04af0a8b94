#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Server side of unet_run_batch_sends (t_unet_run_batch.sh).

batch-server.py ADDR PORT N ROUNDS FIFO: accept N connections, then for
each round wait for a line on FIFO (the client's "all N requests sent"),
take every readable socket from one epoll_wait and answer each request
("re:" + request).  getppid() calls mark the answering in a system call
trace: between the first and the second of a round nothing under
--batch-sends may kick the AF_XDP socket (the answers are held), and
before the third the batch has ended: on even rounds through a readiness
wait (epoll_wait with a zero timeout), on odd ones through the blocking
read of the next round's line (a data call passed to the kernel).  The
FIFO is opened read-write, so the open never blocks outside the preload.
"""
import os
import select
import socket
import sys

addr, port, n, rounds, fifo = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr, port))
ls.listen(n)
print("ready listening", flush=True)
conns = {}
for _ in range(n):
    c, _peer = ls.accept()
    c.setblocking(False)
    conns[c.fileno()] = c
ep = select.epoll()
for fd in conns:
    ep.register(fd, select.EPOLLIN)
ff = os.open(fifo, os.O_RDWR)
for rnd in range(rounds):
    line = b""
    while not line.endswith(b"\n"):
        line += os.read(ff, 1)
    got = {}
    # Every request is in by now (the client wrote the line after its
    # sends, which veth delivers inside them); take them in one wait.
    evs = ep.poll(5)
    if len(evs) != n:
        sys.exit(f"round {rnd}: one epoll_wait gave {len(evs)} sockets, not {n}")
    os.getppid()  # mark: answering starts
    for fd, _ev in evs:
        req = conns[fd].recv(256)
        got[fd] = req
        conns[fd].send(b"re:" + req)
    os.getppid()  # mark: answered
    if rnd % 2 == 0:
        ep.poll(0)  # a readiness wait ends the batch
        os.getppid()  # mark: after the wait
    # odd rounds: the next round's read (or the end's) ends it
print("done", flush=True)
line = b""
while not line.endswith(b"\n"):
    line += os.read(ff, 1)
