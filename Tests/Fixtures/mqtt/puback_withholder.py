#!/usr/bin/env python3
"""A TCP proxy in front of an MQTT 3.1.1 broker that withholds from its client the broker's
acknowledgement (PUBACK) of the client's first QoS 1 message on a topic ending in SUFFIX, and
passes everything else both ways: an acknowledgement that never comes while the connection
stays (keepalive pings still answered).

    puback_withholder.py --broker-port N --suffix /backfill

Prints {"ready": true, "port": P} once it listens on 127.0.0.1:P, then {"withheld": ID} when it
drops that acknowledgement. Runs until SIGTERM.
"""
import argparse
import asyncio
import json
import sys


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def read_packet(reader):
    """One MQTT control packet: (first byte, whole packet bytes)."""
    first = await reader.readexactly(1)
    length_bytes = b""
    length = 0
    multiplier = 1
    while True:
        byte = await reader.readexactly(1)
        length_bytes += byte
        length += (byte[0] & 0x7F) * multiplier
        if byte[0] & 0x80 == 0:
            break
        multiplier *= 128
        if multiplier > 128 ** 3:
            raise ValueError("malformed remaining length")
    body = await reader.readexactly(length)
    return first[0], first + length_bytes + body, body


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker-port", type=int, required=True)
    parser.add_argument("--suffix", required=True)
    args = parser.parse_args()
    state = {"watched": None, "done": False}

    async def pump(reader, writer, forwards):
        """Copies packets from reader to writer, those forwards(first, body) keeps."""
        try:
            while True:
                first, packet, body = await read_packet(reader)
                if forwards(first, body):
                    writer.write(packet)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    def upstream(first, body):
        # The client's first QoS 1 PUBLISH on a watched topic: its packet id is noted.
        if first >> 4 == 3 and (first >> 1) & 0x03 == 1 and state["watched"] is None:
            topic_length = int.from_bytes(body[0:2], "big")
            topic = body[2 : 2 + topic_length].decode("utf-8", "replace")
            if topic.endswith(args.suffix):
                state["watched"] = int.from_bytes(body[2 + topic_length : 4 + topic_length], "big")
        return True

    def downstream(first, body):
        # The broker's PUBACK of that packet, once: withheld.
        if first >> 4 == 4 and not state["done"] and int.from_bytes(body[0:2], "big") == state["watched"]:
            state["done"] = True
            emit({"withheld": state["watched"]})
            return False
        return True

    async def handle(client_reader, client_writer):
        broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", args.broker_port)
        await asyncio.gather(
            pump(client_reader, broker_writer, upstream), pump(broker_reader, client_writer, downstream)
        )

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    emit({"ready": True, "port": server.sockets[0].getsockname()[1]})
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
