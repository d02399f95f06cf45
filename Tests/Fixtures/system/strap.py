#!/usr/bin/env python3
"""The system bed's hardware (runs in the guest as hrbridge-bed-strap.service, under the
real-BlueZ bed's Bumble venv): a Bumble controller on /dev/vhci that bluetoothd sees as hci0, and
one heart-rate strap on its link that wants an encrypted link for notifications (so it must be
paired) and keeps its bond in /var/lib/hrbridge-bed (so it survives a reboot, as a real strap's
does).

While a central is subscribed it sends a frame every 0.25 s, heart rate 60..179 in turn, and
appends each frame it sent to OUT/sent.jsonl ({"t": wall time, "hr": …}); its connections,
pairings, encrypted links and frames sent this boot go to OUT/strap-<boot id>.json with every frame.
"""

import asyncio
import json
import os
import sys
import time

sys.path.insert(0, "/host" + os.environ["BLUEZ_FIXTURES"])
from bed import AddressedLink, ResettingController, Strap, log  # noqa: E402

from bumble import hci  # noqa: E402
from bumble.keys import JsonKeyStore  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

ADDRESS = "C1:00:00:00:00:39"
NAME = "HRM-System 39"
INTERVAL = 0.25
KEYS = "/var/lib/hrbridge-bed/strap-keys.json"


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as file:
        return file.read().strip()


async def main(out):
    os.makedirs(os.path.dirname(KEYS), exist_ok=True)
    link = AddressedLink()
    transport = await open_transport("vhci")
    controller = ResettingController(
        "hci0", host_source=transport.source, host_sink=transport.sink, link=link,
        public_address="F0:F1:F2:F3:F4:00",
    )
    controller.le_features &= ~(hci.LeFeatureMask.LL_PRIVACY | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING)
    strap = Strap(link, NAME, ADDRESS, bonding=True)
    strap.device.keystore = JsonKeyStore(None, KEYS)
    await strap.power_on()
    await strap.advertise()
    log(f"{NAME} advertising as {ADDRESS}")
    state_file = os.path.join(out, f"strap-{boot_id()}.json")

    def write_state():
        state = {"address": ADDRESS, "connections": strap.connections, "pairings": strap.pairings,
                 "encrypted": strap.encrypted_connections, "sent": count}
        with open(state_file + ".tmp", "w") as file:
            json.dump(state, file)
        os.replace(state_file + ".tmp", state_file)

    count = 0
    with open(os.path.join(out, "sent.jsonl"), "a", buffering=1) as sent:
        while True:
            write_state()
            await strap.subscribed.wait()
            while strap.subscribed.is_set() and strap.connection is not None:
                rate = 60 + count % 120
                try:
                    await strap.device.notify_subscribers(strap.measurement, bytes([0x06, rate]))
                except Exception as error:  # a link that just dropped
                    log(f"notify failed: {error}")
                    break
                sent.write(json.dumps({"t": time.time(), "hr": rate}) + "\n")
                count += 1
                write_state()
                await asyncio.sleep(INTERVAL)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
