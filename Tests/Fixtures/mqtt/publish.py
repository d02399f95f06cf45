#!/usr/bin/env python3
"""Publishes one message with PyPI paho-mqtt (QoS 1, retained with --retain) and exits once the
broker acknowledged it: publish.py --port N [--retain] TOPIC PAYLOAD"""
import argparse
import sys

import paho.mqtt.client as mqtt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--retain", action="store_true")
    parser.add_argument("topic")
    parser.add_argument("payload")
    args = parser.parse_args()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
    client.connect("127.0.0.1", args.port, keepalive=10)
    client.loop_start()
    info = client.publish(args.topic, args.payload.encode(), qos=1, retain=args.retain)
    info.wait_for_publish(timeout=60)
    client.disconnect()
    client.loop_stop()
    sys.exit(0 if info.is_published() else 1)


if __name__ == "__main__":
    main()
