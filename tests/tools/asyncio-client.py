#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""asyncio-client.py ADDR PORT CONNS: CONNS TCP connections at once,
each sending 256 KiB of its own pattern and reading it back whole, and
200 UDP datagrams of sizes 1..1400 echoed before them; exits 0 when every byte
came back as sent."""
import asyncio, sys

addr, port, conns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
SIZE = 256 << 10

async def one(i):
    r, w = await asyncio.open_connection(addr, port)
    data = bytes((j * 13 + i) % 256 for j in range(SIZE))
    async def send():
        for k in range(0, SIZE, 7000):
            w.write(data[k:k + 7000])
            await w.drain()
        w.write_eof()
    t = asyncio.create_task(send())
    got = await r.readexactly(SIZE)
    await t
    if await r.read() != b"":
        sys.exit("conn %d: more than was sent" % i)
    w.close()
    if got != data:
        sys.exit("conn %d: echo differs" % i)

class Udp(asyncio.DatagramProtocol):
    def __init__(self):
        self.q = asyncio.Queue()
    def datagram_received(self, data, peer):
        self.q.put_nowait(data)

async def main():
    # UDP first: the server ends with its last TCP connection.
    loop = asyncio.get_running_loop()
    t, p = await loop.create_datagram_endpoint(Udp, remote_addr=(addr, port))
    for i in range(200):
        msg = bytes([i % 256]) * (1 + (i * 7) % 1400)
        t.sendto(msg)
        if await asyncio.wait_for(p.q.get(), 5) != msg:
            sys.exit("udp datagram %d differs" % i)
    t.close()
    await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(conns))), 60)
    print("client ok", flush=True)

asyncio.run(main())
