"""Reads the daemon's WebSocket stream with the `websockets` client (PyPI) and prints the first
COUNT text messages, one per line. usage: ws_watch.py URL TOKEN COUNT"""
import asyncio
import sys

from websockets.asyncio.client import connect


async def main(url, token, count):
    headers = {"Authorization": "Bearer " + token} if token else {}
    async with connect(url, additional_headers=headers, open_timeout=60) as socket:
        for _ in range(count):
            message = await asyncio.wait_for(socket.recv(), 60)
            print(message, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
