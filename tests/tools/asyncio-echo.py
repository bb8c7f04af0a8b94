#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""asyncio-echo.py ADDR PORT CONNS: an asyncio event loop (epoll,
level-triggered readers and writers) serving a TCP echo and a UDP echo
on PORT; exits 0 after CONNS TCP connections have been echoed to their
end.  Its client is asyncio-client.py."""
import asyncio, sys

addr, port, conns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

class UdpEcho(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.t = transport
    def datagram_received(self, data, peer):
        self.t.sendto(data, peer)

async def main():
    done = asyncio.Event()
    served = 0
    async def echo(r, w):
        nonlocal served
        total = 0
        while True:
            d = await r.read(65536)
            if not d:
                break
            w.write(d)
            await w.drain()
            total += len(d)
        w.close()
        await w.wait_closed()
        served += 1
        print("echoed", total, flush=True)
        if served == conns:
            done.set()
    srv = await asyncio.start_server(echo, addr, port)
    loop = asyncio.get_running_loop()
    udp, _ = await loop.create_datagram_endpoint(UdpEcho, local_addr=(addr, port))
    print("ready endpoint=0", flush=True)
    await asyncio.wait_for(done.wait(), 60)
    udp.close()
    srv.close()

asyncio.run(main())
