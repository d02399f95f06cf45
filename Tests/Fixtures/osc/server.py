#!/usr/bin/env python3
"""A third-party OSC server (PyPI python-osc) for the tests: receives UDP on loopback and prints
every message as one JSON line on stdout.

    server.py [--host 127.0.0.1] [--port 0]

Binds the host on the port (0: one the kernel picks, free), prints {"ready": true, "port": N},
then per message {"address", "tags", "values", "received"}: the type tag string as sent (",iTF"),
the values as python-osc decodes them, and the receipt time in seconds (a monotonic clock: only
differences mean anything). A datagram python-osc refuses is {"refused": "<hex>"}. Runs until
SIGTERM.
"""
import argparse
import json
import socket
import sys
import threading
import time

from pythonosc import osc_packet
from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import BlockingOSCUDPServer
from pythonosc.parsing import osc_types


class Recorder(Dispatcher):
    """Prints each message instead of dispatching it (every address is of interest)."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def emit(self, obj):
        with self.lock:
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

    def call_handlers_for_packet(self, data, client_address):
        received = time.monotonic()
        try:
            packet = osc_packet.OscPacket(data)
        except osc_packet.ParseError:
            self.emit({"refused": data.hex(), "received": received})
            return []
        for timed in packet.messages:
            message = timed.message
            _, index = osc_types.get_string(message.dgram, 0)
            tags = osc_types.get_string(message.dgram, index)[0] if message.dgram[index:] else ""
            self.emit({
                "address": message.address,
                "tags": tags,
                "values": list(message.params),
                "received": received,
            })
        return []


class Server(BlockingOSCUDPServer):
    """Reports the datagrams python-osc does not take for OSC (they are dropped unseen otherwise)."""

    def verify_request(self, request, client_address):
        valid = super().verify_request(request, client_address)
        if not valid:
            self.dispatcher.emit({"refused": request[0].hex(), "received": time.monotonic()})
        return valid


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    if ":" in args.host:
        Server.address_family = socket.AF_INET6
    recorder = Recorder()
    server = Server((args.host, args.port), recorder)
    recorder.emit({"ready": True, "port": server.server_address[1]})
    server.serve_forever()


if __name__ == "__main__":
    main()
