#!/usr/bin/env python3
"""The real-BlueZ test bed's guest side (runs as root in the QEMU guest, see guest.sh).

Starts bluetoothd, gives it virtual controllers on /dev/vhci (Bumble), plays Bumble virtual
straps (Heart Rate, Battery, Device Information) linked to them, runs hrbridge against it and
records what hrbridge printed. The frames the straps send come from the test's plan.json; each
scenario writes <out>/<scenario>/: hrbridge's stdout and stderr, and result.json (what the
straps did). The assertions are the Swift test's (Tests/RealBlueZTests).
"""

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
import urllib.parse

from bumble import hci
from bumble.att import Attribute
from bumble.controller import Controller
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import AdvertisingType, Device
from bumble.gatt import (
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    Characteristic,
    Service,
)
from bumble.host import Host
from bumble.keys import MemoryKeyStore
from bumble.link import LocalLink
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

BLUETOOTHD = "/usr/libexec/bluetooth/bluetoothd"
HEART_RATE = 0x180D
BATTERY = 0x180F
DEVICE_INFORMATION = 0x180A


def log(text):
    print(f"bed: {text}", flush=True)


class AddressedLink(LocalLink):
    """Bumble's LocalLink tags LE ACL data with the sender's random address; a central that
    connected with another (private) address then drops it. Use the address of the sender's
    connection to that peer instead."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        connection = sender_controller.le_connections.get(destination_address)
        source = connection.self_address if connection else sender_controller.random_address
        destination = self.find_le_controller(destination_address)
        if destination is not None:
            asyncio.get_running_loop().call_soon(
                lambda: destination.on_link_acl_data(source, transport, data)
            )


class ResettingController(Controller):
    """The controller BlueZ drives. Bumble's HCI_Reset keeps its links; a real controller's reset
    drops them, and each strap notices by its supervision timeout and advertises again."""

    def on_hci_reset_command(self, command):
        for connection in list(self.le_connections.values()):
            peer = self.link.find_le_controller(connection.peer_address)
            peer_connection = peer.le_connections.get(connection.self_address) if peer else None
            if peer_connection is not None:
                peer.on_le_disconnected(peer_connection, hci.HCI_CONNECTION_TIMEOUT_ERROR)
            del self.le_connections[connection.peer_address]
        return super().on_hci_reset_command(command)


class BroadcastOnlyController(Controller):
    """A strap that only broadcasts: connection requests go unanswered (Bumble's link would
    connect a non-connectable advertiser), as with a strap whose one connection is taken."""

    def on_le_connect_ind(self, packet):
        pass


class Strap:
    """A virtual heart-rate strap: a Bumble device on its own controller on a link."""

    def __init__(self, link, name, address, bonding=False, services=(HEART_RATE, BATTERY), broadcast=False):
        self.name = name
        self.address = address
        self.bonding = bonding
        # Polar-style: the heart rate in manufacturer data (company 0x006B), advertised without
        # accepting connections, so only the broadcast can be heard.
        self.broadcast = broadcast
        self.broadcast_counter = 0
        self.broadcast_rate = 60
        self.broadcast_sent = []
        self.advertised_services = services
        self.controller = (BroadcastOnlyController if broadcast else Controller)(f"strap {name}", link=link)
        self.device = Device(
            name=name,
            address=hci.Address(address),
            host=Host(self.controller, AsyncPipeSink(self.controller)),
        )
        self.device.keystore = MemoryKeyStore()
        self.sent = []
        self.pairings = 0
        self.encrypted_connections = 0
        self.connections = 0
        self.subscribed = asyncio.Event()
        self.disconnected = asyncio.Event()
        self.connection = None
        self.measurement = Characteristic(
            "2A37", Characteristic.Properties.NOTIFY, Characteristic.READABLE, b""
        )
        location = Characteristic(
            "2A38",
            Characteristic.Properties.READ,
            Attribute.READ_REQUIRES_ENCRYPTION if bonding else Characteristic.READABLE,
            bytes([1]),
        )
        self.battery = Characteristic(
            "2A19",
            Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
            Characteristic.READABLE,
            bytes([87]),
        )
        information = [
            Characteristic("2A29", Characteristic.Properties.READ, Characteristic.READABLE, b"Bumble Labs"),
            Characteristic("2A24", Characteristic.Properties.READ, Characteristic.READABLE, b"HRM-Virtual"),
            Characteristic("2A26", Characteristic.Properties.READ, Characteristic.READABLE, b"1.0.0"),
        ]
        if HEART_RATE in services:
            self.device.add_services(
                [
                    Service("180D", [self.measurement, location]),
                    Service("180F", [self.battery]),
                    Service("180A", information),
                ]
            )
        else:
            self.device.add_services([Service("180A", information)])
        if bonding:
            # Notifications only over an encrypted link: the central has to pair first.
            for attribute in self.device.gatt_server.attributes:
                if (
                    attribute.type == GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
                    and self.measurement.handle < attribute.handle <= self.measurement.end_group_handle
                ):
                    attribute.permissions = Attribute.READABLE | Attribute.WRITE_REQUIRES_ENCRYPTION
        self.device.pairing_config_factory = lambda connection: PairingConfig(
            sc=True,
            mitm=False,
            bonding=True,
            delegate=PairingDelegate(io_capability=PairingDelegate.NO_OUTPUT_NO_INPUT),
        )
        self.device.on("connection", self._on_connection)
        self.measurement.on("subscription", self._on_subscription)

    def _on_connection(self, connection):
        self.connections += 1
        self.connection = connection
        self.subscribed.clear()
        self.disconnected.clear()
        log(f"{self.name}: connected from {connection.peer_address}")

        def on_disconnection(reason):
            log(f"{self.name}: disconnected (reason {reason})")
            if self.connection is connection:
                self.connection = None
                self.subscribed.clear()
                self.disconnected.set()

        def on_pairing(keys):
            self.pairings += 1
            log(f"{self.name}: paired")

        def on_encryption_change(*_):
            if connection.is_encrypted:
                self.encrypted_connections += 1
                log(f"{self.name}: link encrypted")

        connection.on("disconnection", on_disconnection)
        connection.on("pairing", on_pairing)
        connection.on("pairing_failure", lambda reason: log(f"{self.name}: pairing failed: {reason}"))
        connection.on("connection_encryption_change", on_encryption_change)

    def _on_subscription(self, connection, notify_enabled, indicate_enabled):
        log(f"{self.name}: notifications {'on' if notify_enabled else 'off'}")
        if notify_enabled and connection is self.connection:
            self.subscribed.set()
        elif connection is self.connection:
            self.subscribed.clear()

    def advertising_data(self):
        uuids = b"".join(service.to_bytes(2, "little") for service in self.advertised_services)
        return bytes(
            AdvertisingData(
                [
                    (AdvertisingData.FLAGS, bytes([0x06])),
                    (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, uuids),
                    (AdvertisingData.COMPLETE_LOCAL_NAME, self.name.encode()),
                ]
                + ([(AdvertisingData.MANUFACTURER_SPECIFIC_DATA, self.polar_data())] if self.broadcast else [])
            )
        )

    def polar_data(self):
        """Company 0x006B, then flags (broadcast bit, skin contact, frame counter), kHz code, fast and slow average."""
        flags = 0x20 | 0x02 | (self.broadcast_counter & 0x07) << 2
        return bytes([0x6B, 0x00, flags, 0x00, self.broadcast_rate, self.broadcast_rate])

    async def broadcast_reading(self, rate):
        """A new reading in the advertisements: the frame counter moves on."""
        self.broadcast_counter += 1
        self.broadcast_rate = rate
        self.broadcast_sent.append(rate)
        await self.device.stop_advertising()
        await self.advertise()

    async def power_on(self):
        await self.device.power_on()

    async def advertise(self):
        kind = AdvertisingType.UNDIRECTED if self.broadcast else AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE
        await self.device.start_advertising(
            advertising_type=kind, advertising_data=self.advertising_data(), auto_restart=not self.broadcast,
            own_address_type=hci.OwnAddressType.RANDOM,
        )

    async def go_away(self, reason=hci.HCI_CONNECTION_TIMEOUT_ERROR):
        """Out of range: stop advertising and drop the link as a lost link does."""
        await self.device.stop_advertising()
        if self.connection is not None:
            await self.connection.disconnect(reason)

    async def send(self, frames, interval=0.05):
        """Sends frames while a central is subscribed; returns how many went out."""
        count = 0
        for frame in frames:
            if self.connection is None or not self.subscribed.is_set():
                log(f"{self.name}: nobody subscribed; {count} of {len(frames)} frames sent")
                break
            await self.device.notify_subscribers(self.measurement, bytes.fromhex(frame))
            self.sent.append(frame)
            count += 1
            await asyncio.sleep(interval)
        return count


class Hrbridge:
    """An hrbridge process whose JSON lines are read as they come."""

    running = []

    def __init__(self, binary, folder, name):
        self.binary = binary
        self.folder = folder
        self.name = name
        self.lines = []
        self.changed = asyncio.Event()
        self.process = None

    async def start(self, *arguments):
        self.stdout = open(os.path.join(self.folder, f"{self.name}.out"), "w")
        self.stderr = open(os.path.join(self.folder, f"{self.name}.err"), "w")
        self.process = await asyncio.create_subprocess_exec(
            self.binary, *arguments, stdout=asyncio.subprocess.PIPE, stderr=self.stderr
        )
        self.reader = asyncio.create_task(self._read())
        Hrbridge.running.append(self)
        log(f"started hrbridge {' '.join(arguments)} (pid {self.process.pid})")

    async def _read(self):
        while True:
            line = await self.process.stdout.readline()
            if not line:
                break
            text = line.decode(errors="replace").rstrip("\n")
            self.stdout.write(text + "\n")
            self.stdout.flush()
            try:
                self.lines.append(json.loads(text))
            except ValueError:
                self.lines.append({"text": text})
            self.changed.set()

    def frames(self):
        """Frames hrbridge printed: measurements and refused ones."""
        return len([line for line in self.lines if "heartRate" in line or line.get("event") == "frameRefused"])

    async def wait_for_frames(self, count, timeout=30):
        return await self.wait_for(lambda _: self.frames() >= count, timeout)

    async def wait_for_events(self, event, count, timeout=60):
        """Waits until `count` lines of `event` (e.g. "connected") have been printed."""
        return await self.wait_for(lambda lines: sum(1 for l in lines if l.get("event") == event) >= count, timeout)

    async def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while not predicate(self.lines):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.process.returncode is not None and self.reader.done():
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                return predicate(self.lines)
        return True

    async def stop(self):
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()
        await self.reader
        if self in Hrbridge.running:
            Hrbridge.running.remove(self)
        self.stdout.close()
        self.stderr.close()
        return self.process.returncode

    async def run(self, *arguments, timeout=120):
        await self.start(*arguments)
        try:
            await asyncio.wait_for(self.process.wait(), timeout)
        except asyncio.TimeoutError:
            self.process.kill()
        return await self.stop()


class Bed:
    def __init__(self, out):
        self.out = out
        with open(os.path.join(out, "plan.json")) as file:
            self.plan = json.load(file)
        self.binary = self.plan["hrbridge"]
        self.frames = self.plan["frames"]
        self.bluetoothd = None
        self.links = []
        self.controllers = []

    def folder(self, scenario):
        path = os.path.join(self.out, scenario)
        os.makedirs(path, exist_ok=True)
        return path

    # Nothing here may block the event loop: the Bumble controllers answer the kernel's HCI
    # commands on it, and bluetoothd waits on them while powering, stopping and connecting.
    async def start_bluetoothd(self):
        logfile = open(os.path.join(self.out, "bluetoothd.log"), "a")
        self.bluetoothd = await asyncio.create_subprocess_exec(BLUETOOTHD, "-n", "-d", stdout=logfile, stderr=logfile)
        log(f"bluetoothd started (pid {self.bluetoothd.pid})")

    async def stop_bluetoothd(self):
        self.bluetoothd.terminate()
        try:
            await asyncio.wait_for(self.bluetoothd.wait(), 60)
        except asyncio.TimeoutError:
            self.bluetoothd.kill()
            await self.bluetoothd.wait()
        log("bluetoothd stopped")

    async def add_controller(self, index):
        """A controller BlueZ sees as hci<index>, on a link of its own."""
        link = AddressedLink()
        transport = await open_transport("vhci")
        controller = ResettingController(
            f"hci{index}",
            host_source=transport.source,
            host_sink=transport.sink,
            link=link,
            public_address=f"F0:F1:F2:F3:F4:{index:02X}",
        )
        controller.le_features &= ~(
            hci.LeFeatureMask.LL_PRIVACY | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        )
        self.links.append(link)
        self.controllers.append((transport, controller))
        await self.power(f"hci{index}")
        return link

    async def power(self, adapter):
        """Powers the adapter once bluetoothd has it (it appears a moment after the controller)."""
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            setter = await asyncio.create_subprocess_exec(
                "busctl", "--system", "--timeout=30", "set-property", "org.bluez", f"/org/bluez/{adapter}",
                "org.bluez.Adapter1", "Powered", "b", "true",
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            )
            if await setter.wait() == 0:
                log(f"{adapter} powered")
                return
            await asyncio.sleep(0.3)
        raise RuntimeError(f"{adapter} never appeared on the bus")

    async def strap(self, link, name, address, **options):
        strap = Strap(link, name, address, **options)
        await strap.power_on()
        await strap.advertise()
        return strap

    def result(self, scenario, **values):
        with open(os.path.join(self.folder(scenario), "result.json"), "w") as file:
            json.dump(values, file, indent=1)

    # Scenarios ---------------------------------------------------------------------------

    async def scan(self, link):
        folder = self.folder("scan")
        strap = await self.strap(link, "HRM-Scan 01", "C1:00:00:00:00:01")
        decoy = await self.strap(link, "Kettle 7", "C1:00:00:00:00:99", services=(0x1812,))
        code = await Hrbridge(self.binary, folder, "scan").run("scan", "--json", "--timeout", "8")
        await strap.go_away()
        await decoy.go_away()
        self.result("scan", exit=code, strap=strap.address, decoy=decoy.address)

    async def stream(self, strap, folder, name, extra=()):
        """monitor --json on one strap: every frame of the plan, then stop."""
        monitor = Hrbridge(self.binary, folder, name)
        await monitor.start("monitor", "--json", *extra, strap.address)
        await asyncio.wait_for(strap.subscribed.wait(), 90)
        sent = await strap.send(self.frames)
        await monitor.wait_for_frames(sent)
        # Frames can overtake StartNotify's reply: stop only once monitor has said "connected".
        await monitor.wait_for_events("connected", 1)
        code = await monitor.stop()
        return code, sent

    async def first_half(self, strap, folder):
        """monitor --json on the strap, and the first half of the frames delivered."""
        monitor = Hrbridge(self.binary, folder, "monitor")
        await monitor.start("monitor", "--json", strap.address)
        await asyncio.wait_for(strap.subscribed.wait(), 90)
        first = await strap.send(self.frames[: len(self.frames) // 2])
        await monitor.wait_for_frames(first)
        await monitor.wait_for_events("connected", 1)
        return monitor, first

    async def second_half(self, strap, monitor, first):
        """Once the strap is subscribed again: the rest of the frames, then monitor stops."""
        await asyncio.wait_for(strap.subscribed.wait(), 90)
        second = await strap.send(self.frames[len(self.frames) // 2 :])
        await monitor.wait_for_frames(first + second)
        await monitor.wait_for_events("connected", 2)
        return await monitor.stop(), first + second

    async def monitor(self, link):
        folder = self.folder("monitor")
        strap = await self.strap(link, "HRM-Stream 02", "C1:00:00:00:00:02")
        code, sent = await self.stream(strap, folder, "startnotify")
        acquired_code, acquired_sent = await self.stream(strap, folder, "acquirenotify", ("--acquire-notify",))
        await strap.go_away()
        self.result(
            "monitor", strap=strap.address, startnotify={"exit": code, "sent": sent},
            acquirenotify={"exit": acquired_code, "sent": acquired_sent}, frames=self.frames,
        )

    async def pair(self, link):
        folder = self.folder("pair")
        strap = await self.strap(link, "HRM-Bond 03", "C1:00:00:00:00:03", bonding=True)
        pair_code = await Hrbridge(self.binary, folder, "pair").run("pair", strap.address, "--timeout", "30")
        pairings_after_pair = strap.pairings
        monitor, first = await self.first_half(strap, folder)
        # The strap drops the link and comes back: the bond is reused, nobody pairs again.
        await strap.connection.disconnect(hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR)
        code, sent = await self.second_half(strap, monitor, first)
        devices = await Hrbridge(self.binary, folder, "devices").run("devices", "--json")
        await strap.go_away()
        self.result(
            "pair", strap=strap.address, pairExit=pair_code, monitorExit=code, devicesExit=devices,
            sent=sent, pairingsAfterPair=pairings_after_pair, pairings=strap.pairings,
            connections=strap.connections, encryptedConnections=strap.encrypted_connections,
        )

    async def away(self, link):
        folder = self.folder("away")
        strap = await self.strap(link, "HRM-Away 04", "C1:00:00:00:00:04")
        monitor, first = await self.first_half(strap, folder)
        away_seconds = 4.0
        await strap.go_away()
        await asyncio.sleep(away_seconds)
        back = time.monotonic()
        await strap.advertise()
        await asyncio.wait_for(strap.subscribed.wait(), 90)
        resubscribed_after = time.monotonic() - back
        code, sent = await self.second_half(strap, monitor, first)
        await strap.go_away()
        self.result(
            "away", strap=strap.address, exit=code, sent=sent, awaySeconds=away_seconds,
            resubscribedAfterSeconds=resubscribed_after,
        )

    async def restart(self, link):
        folder = self.folder("restart")
        strap = await self.strap(link, "HRM-Restart 05", "C1:00:00:00:00:05")
        monitor, first = await self.first_half(strap, folder)
        await self.stop_bluetoothd()
        await monitor.wait_for(lambda lines: any(l.get("state") == "serviceStopped" for l in lines), 30)
        await self.start_bluetoothd()
        await self.power("hci0")
        # The restarted bluetoothd resets the controller: the old link is gone, then a new one.
        await asyncio.wait_for(strap.disconnected.wait(), 60)
        code, sent = await self.second_half(strap, monitor, first)
        await strap.go_away()
        self.result("restart", strap=strap.address, exit=code, sent=sent)

    async def two_adapters(self, first_link):
        folder = self.folder("adapters")
        second_link = await self.add_controller(1)
        straps = [
            await self.strap(first_link, "HRM-Left 06", "C1:00:00:00:00:06"),
            await self.strap(second_link, "HRM-Right 07", "C1:00:00:00:00:07"),
        ]
        monitor = Hrbridge(self.binary, folder, "monitor")
        await monitor.start("monitor", "--json", *[strap.address for strap in straps])
        for strap in straps:
            await asyncio.wait_for(strap.subscribed.wait(), 90)
        counts = await asyncio.gather(*[strap.send(self.frames) for strap in straps])
        await monitor.wait_for_frames(sum(counts))
        await monitor.wait_for_events("connected", len(straps))
        code = await monitor.stop()
        for strap in straps:
            await strap.go_away()
        self.result(
            "adapters", exit=code,
            straps=[{"address": strap.address, "adapter": f"hci{index}", "sent": count} for index, (strap, count) in enumerate(zip(straps, counts))],
        )

    async def daemon(self, link):
        folder = self.folder("daemon")
        strap = await self.strap(link, "HRM-Daemon 08", "C1:00:00:00:00:08")
        socket_path = "/run/hrbridge-api.sock"
        # SQLite needs POSIX locks, which the 9p share does not give: the store lives in the
        # guest's tmpfs and is copied out once the daemon has stopped.
        store = "/run/hrbridge-store.sqlite"
        config = os.path.join(folder, "config.toml")
        with open(config, "w") as file:
            file.write(
                f'[adapter]\nkind = "bluez"\n\n[store]\npath = "{store}"\n\n'
                f'[api]\nsocket = "{socket_path}"\n\n'
                f'[[athletes]]\nid = "ada"\nname = "Ada"\nmax_hr = 190\n\n'
                f'[[sensors]]\naddress = "{strap.address}"\nathlete = "ada"\n'
            )
        daemon = Hrbridge(self.binary, folder, "daemon")
        await daemon.start("daemon", "--config", config)
        api = UnixHTTP(socket_path)
        deadline = time.monotonic() + 90
        while not strap.subscribed.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        ready = await api.wait_for_state(f"/v1/sensors/{urllib.parse.quote(strap.address)}", "ready", 60)
        status, session = await api.request("POST", "/v1/sessions", {"sensors": [strap.address], "activity": "running"})
        session_id = session.get("id") if isinstance(session, dict) else None
        sent = 0
        if status == 201 and session_id:
            await api.wait_for_state(f"/v1/sessions/{session_id}", "running", 30)
            # 1.5 s apart: each frame becomes its own FIT record (1 s resolution).
            sent = await strap.send(self.frames, interval=1.5)
            await asyncio.sleep(1.0)
            await api.request("POST", f"/v1/sessions/{session_id}/stop", {})
        workout_status, workout = await api.request("GET", f"/v1/sessions/{session_id}")
        export_status, fit = await api.request("GET", f"/v1/workouts/{session_id}/export?format=fit", raw=True)
        if export_status == 200:
            with open(os.path.join(folder, "workout.fit"), "wb") as file:
                file.write(fit)
        samples_status, samples = await api.request("GET", f"/v1/workouts/{session_id}/samples")
        with open(os.path.join(folder, "samples.json"), "w") as file:
            json.dump(samples, file)
        code = await daemon.stop()
        if os.path.exists(store):
            shutil.copyfile(store, os.path.join(folder, "store.sqlite"))
        await strap.go_away()
        self.result(
            "daemon", strap=strap.address, exit=code, sensorReady=ready, sessionStatus=status, session=session_id,
            sent=sent, exportStatus=export_status, samplesStatus=samples_status, frames=self.frames,
        )

    async def broadcast(self, link):
        folder = self.folder("broadcast")
        strap = await self.strap(link, "Polar H10 09", "C1:00:00:00:00:09", broadcast=True)
        monitor = Hrbridge(self.binary, folder, "monitor")
        await monitor.start("monitor", "--json", strap.address)

        def heard(lines):
            return [l["heartRate"] for l in lines if l.get("via") == "advertisement"]

        # Readiness: hrbridge hears the first reading (a connect attempt made before it may pause
        # the controller's scanning for up to 30 s). Then a new reading every 5 s for the first
        # minute, none waited for: no connect attempt may pause scanning within that minute, so
        # every one is heard (BlueZ reports a changed value only: one missed is lost).
        first = await monitor.wait_for(lambda lines: len(heard(lines)) >= 1, 120)
        rates = list(range(61, 72))
        if first:
            for rate in rates:
                await strap.broadcast_reading(rate)
                await asyncio.sleep(5)
            await monitor.wait_for(lambda lines: rates[-1] in heard(lines), 15)
        code = await monitor.stop()
        await strap.go_away()
        self.result("broadcast", strap=strap.address, exit=code, firstHeard=first, rates=rates, connections=strap.connections)

    async def run(self, scenarios):
        await self.start_bluetoothd()
        first_link = await self.add_controller(0)
        available = {
            "scan": self.scan, "monitor": self.monitor, "pair": self.pair, "away": self.away,
            "restart": self.restart, "adapters": self.two_adapters, "daemon": self.daemon,
            "broadcast": self.broadcast,
        }
        for name in scenarios:
            log(f"scenario {name}")
            started = time.monotonic()
            try:
                await asyncio.wait_for(available[name](first_link), 300)
            except BaseException as error:  # recorded for the test, then the next scenario runs
                with open(os.path.join(self.folder(name), "failure.txt"), "w") as file:
                    file.write("".join(traceback.format_exception(error)))
                log(f"scenario {name} failed: {error!r}")
            for process in list(Hrbridge.running):
                await process.stop()
            log(f"scenario {name} took {time.monotonic() - started:.1f} s")
        await self.stop_bluetoothd()


class UnixHTTP:
    """Just enough HTTP/1.1 over the daemon's Unix socket."""

    def __init__(self, path):
        self.path = path

    async def request(self, method, target, body=None, raw=False):
        try:
            reader, writer = await asyncio.open_unix_connection(self.path)
        except OSError:
            return 0, None
        payload = json.dumps(body).encode() if body is not None else b""
        head = f"{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        writer.write(head.encode() + b"\r\n" + payload)
        await writer.drain()
        response = await reader.read()
        writer.close()
        header, _, content = response.partition(b"\r\n\r\n")
        status = int(header.split(b" ")[1])
        if b"transfer-encoding: chunked" in header.lower():
            content = dechunk(content)
        if raw:
            return status, content
        try:
            return status, json.loads(content) if content else None
        except ValueError:
            return status, content.decode(errors="replace")

    async def wait_for_state(self, target, state, timeout):
        """Polls a resource of the API until its "state" is `state` (inside the guest only)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, body = await self.request("GET", target)
            if status == 200 and isinstance(body, dict) and body.get("state") == state:
                return True
            await asyncio.sleep(0.3)
        return False


def dechunk(data):
    out = b""
    while data:
        size_text, _, rest = data.partition(b"\r\n")
        size = int(size_text.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2:]
    return out


def main():
    bed = Bed(sys.argv[1])
    asyncio.run(bed.run(bed.plan["scenarios"]))
    log("done")


if __name__ == "__main__":
    main()
