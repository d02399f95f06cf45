#!/usr/bin/env python3
"""A third-party MQTT client (PyPI paho-mqtt) for the tests: subscribes to topic filters and
prints every message as one JSON line on stdout.

    subscriber.py --port N [--client-id ID --persistent] [--cafile CA --tls-port N] FILTER...

Prints {"ready": true} once every subscription is acknowledged (and again after each reconnect),
then {"topic", "payload", "retain", "qos"} per message (payload as text). Runs until SIGTERM.
"""
import argparse
import json
import sys
import threading

import paho.mqtt.client as mqtt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--client-id", default="")
    parser.add_argument("--persistent", action="store_true", help="clean_session=False (queued while away)")
    parser.add_argument("--cafile")
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("filters", nargs="+")
    args = parser.parse_args()

    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=args.client_id,
        clean_session=not args.persistent,
        protocol=mqtt.MQTTv311,
    )
    if args.cafile:
        client.tls_set(ca_certs=args.cafile)
    if args.username:
        client.username_pw_set(args.username, args.password)
    lock = threading.Lock()
    pending = set()

    def emit(obj):
        with lock:
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

    def on_connect(client, userdata, flags, reason, properties):
        result, mid = client.subscribe([(f, 1) for f in args.filters])
        pending.add(mid)

    def on_subscribe(client, userdata, mid, reasons, properties):
        pending.discard(mid)
        if not pending:
            emit({"ready": True})

    def on_message(client, userdata, message):
        emit({
            "topic": message.topic,
            "payload": message.payload.decode("utf-8", "replace"),
            "retain": bool(message.retain),
            "qos": message.qos,
        })

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.reconnect_delay_set(min_delay=0.2, max_delay=1)
    client.connect_async("127.0.0.1", args.port, keepalive=10)
    client.loop_forever(retry_first_connection=True)


if __name__ == "__main__":
    main()
