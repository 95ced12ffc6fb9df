#!/usr/bin/env python3
"""A stand-in for systemd's notification socket: binds the datagram socket named on the command
line and prints every message it receives, one NAME=VALUE per line, until killed."""
import os
import socket
import sys

path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
while True:
    msg = s.recv(4096).decode(errors="replace")
    print(msg, flush=True)
