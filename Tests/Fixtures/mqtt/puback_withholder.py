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

    async def handle(client_reader, client_writer):
        broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", args.broker_port)

        async def upstream():
            try:
                while True:
                    first, packet, body = await read_packet(client_reader)
                    qos = (first >> 1) & 0x03
                    if first >> 4 == 3 and qos == 1 and not state["done"] and state["watched"] is None:
                        topic_length = int.from_bytes(body[0:2], "big")
                        topic = body[2 : 2 + topic_length].decode("utf-8", "replace")
                        if topic.endswith(args.suffix):
                            state["watched"] = int.from_bytes(body[2 + topic_length : 4 + topic_length], "big")
                    broker_writer.write(packet)
                    await broker_writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                pass
            finally:
                broker_writer.close()

        async def downstream():
            try:
                while True:
                    first, packet, body = await read_packet(broker_reader)
                    if first >> 4 == 4 and state["watched"] is not None and not state["done"]:
                        if int.from_bytes(body[0:2], "big") == state["watched"]:
                            state["done"] = True
                            emit({"withheld": state["watched"]})
                            continue
                    client_writer.write(packet)
                    await client_writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                pass
            finally:
                client_writer.close()

        await asyncio.gather(upstream(), downstream())

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    emit({"ready": True, "port": server.sockets[0].getsockname()[1]})
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
