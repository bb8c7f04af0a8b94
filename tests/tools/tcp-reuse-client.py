#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tcp-reuse-client.py - a kernel TCP client that binds its source port
with SO_REUSEADDR (as some clients do): connects LOCAL_IP:LPORT to
REMOTE_IP:RPORT (an echo), echoes one line, prints "ready", waits up to
20 s for GO_FILE to appear, then echoes a second line and prints what
came back ("second echo: b'two\\n'" or "second echo: none: ...").

  tcp-reuse-client.py LOCAL_IP LPORT REMOTE_IP RPORT GO_FILE"""
import os
import socket
import sys
import time

lip, lport, rip, rport, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((lip, lport))
s.settimeout(3)
s.connect((rip, rport))
s.sendall(b"one\n")
print("first echo:", s.recv(100), flush=True)
print("ready", flush=True)
for _ in range(200):
    if os.path.exists(go):
        break
    time.sleep(0.1)
s.sendall(b"two\n")
try:
    print("second echo:", s.recv(100), flush=True)
except OSError as e:
    print("second echo: none:", e, flush=True)
    sys.exit(1)
