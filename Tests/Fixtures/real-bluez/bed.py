#!/usr/bin/env python3
"""The real-BlueZ test bed's guest side (runs as root in the QEMU guest, see guest.sh).

Starts bluetoothd, gives it virtual controllers on /dev/vhci (Bumble), plays Bumble virtual
straps (Heart Rate, Battery, Device Information; a Polar H10 adds Polar's PMD service) linked to
them, runs hrbridge against it and records what hrbridge printed. The frames the straps send
come from the test's plan.json (the H10's ECG from pmd-ecg.json beside it); each scenario writes
<out>/<scenario>/: hrbridge's stdout and stderr, and result.json (what the straps did). The assertions are the Swift test's (Tests/RealBlueZTests).
"""

import asyncio
import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import traceback
import urllib.parse

from bumble import hci, ll
from bumble.att import ATT_Error, Attribute
from bumble.controller import Controller
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import AdvertisingType, Device, Peer
from bumble.gatt import (
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    Characteristic,
    CharacteristicValue,
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
HEART_RATE_TEXT = "180D"
# MGMT's experimental feature "LE simultaneous roles". bluetoothd 5.66 lists "central-peripheral"
# in Adapter1.Roles only when KernelExperimental (-K) names it and the kernel offers it, which
# Linux 6.1 does when the controller's LE states allow both roles at once (le_states[3] & 0x10,
# [4] & 0x08 and 0x40, and hci_vhci's HCI_QUIRK_VALID_LE_STATES); it sends no MGMT command for it.
SIMULTANEOUS_ROLES = "671b10b5-42c0-4696-9227-eb28d1b049d6"
# Bumble's default LE states (every combination) without "simultaneous central and peripheral"
# (byte 3, bit 0x10): a controller like many USB dongles.
LIMITED_LE_STATES = bytes.fromhex("ffff3fefff030000")


def log(text):
    # The host's wall time: a scenario's steps line up with the daemons' own logs.
    print(f"bed {time.strftime('%H:%M:%S')}: {text}", flush=True)


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


class AppController(Controller):
    """A phone's controller. Bumble's link answers an active scan with the advertising data again;
    a real advertiser answers with its scan response, where bluetoothd 5.66 puts LocalName. This
    one looks the advertiser up on the link and reports its real scan response."""

    def __init__(self, *arguments, **options):
        super().__init__(*arguments, **options)
        self.le_features &= ~(hci.LeFeatureMask.LL_PRIVACY | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING)
        self.seen = {}

    def on_advertising_pdu(self, pdu):
        if not isinstance(pdu, ll.AdvInd):
            return super().on_advertising_pdu(pdu)
        advertiser = next(
            (c for c in self.link.controllers if c is not self and c.le_legacy_advertiser.enabled
             and c.le_legacy_advertiser.address == pdu.advertiser_address),
            None,
        )
        scan_response = bytes(advertiser.le_legacy_advertiser.scan_response_data) if advertiser else b""
        self.seen[pdu.advertiser_address.to_string(False)] = {"data": pdu.data.hex(), "scanResponse": scan_response.hex()}
        if self.le_scan_enable:
            events = [(hci.HCI_LE_Advertising_Report_Event.EventType.ADV_IND, pdu.data)]
            if self.le_scan_type == 1:  # active
                events.append((hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP, scan_response))
            for kind, data in events:
                report = hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=kind, address_type=pdu.advertiser_address.address_type,
                    address=pdu.advertiser_address, data=data, rssi=-50,
                )
                self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
        pending = self.pending_le_connection
        if pending and pending.peer_address == pdu.advertiser_address:
            self.create_le_connection(pdu.advertiser_address)


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
        # When each frame of `sent` went out (time.monotonic()), for latencies to the relay's apps.
        self.sent_at = []
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
            when = time.monotonic()
            await self.device.notify_subscribers(self.measurement, bytes.fromhex(frame))
            self.sent.append(frame)
            self.sent_at.append(when)
            count += 1
            await asyncio.sleep(interval)
        return count


# Polar's Measurement Data service (lab.md, "Polar H10 PMD"): raw ECG and acceleration.
PMD_SERVICE = "FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_CONTROL = "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_DATA = "FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_ECG, PMD_ACC = 0, 2
# The H10's clock starts at 2019-01-01 (in ns since 2000-01-01) whenever it powers on.
PMD_EPOCH_NS = 599_616_000 * 1_000_000_000
# The settings a GET answers (after F0 01 <type> 00 00): ECG 130 Hz, 14 bit; ACC 50 Hz, 16 bit, 8 G.
PMD_SETTINGS = {0: bytes.fromhex("0001820001010e00"), 2: bytes.fromhex("000132000101100002010800")}


def pmd_header(kind, timestamp, frame_type):
    return bytes([kind]) + timestamp.to_bytes(8, "little") + bytes([frame_type])


def ecg_frame(timestamp, microvolts):
    """Raw type 0: signed 24-bit LE µV."""
    return pmd_header(PMD_ECG, timestamp, 0) + b"".join(v.to_bytes(3, "little", signed=True) for v in microvolts)


def acc_raw_frame(timestamp, samples):
    """Raw type 1: x, y, z int16 LE in mG."""
    return pmd_header(PMD_ACC, timestamp, 1) + b"".join(struct.pack("<hhh", *sample) for sample in samples)


def signed_width(values):
    """The fewest bits (at least 1) that hold every value in two's complement."""
    width = 1
    while any(not -(1 << (width - 1)) <= value < 1 << (width - 1) for value in values):
        width += 1
    return width


def acc_compressed_frame(timestamp, samples, blocks=(17, 18)):
    """Delta-compressed type 1 (byte 9 = 0x81): the first sample as 3 × int16, then blocks of
    [bit width][sample count][deltas packed least significant bit first], each its own width
    (Polar's parseDeltaFramesToSamples; hrbridge's PMDDeltaDecoder)."""
    assert 1 + sum(blocks) == len(samples)
    payload = bytearray(struct.pack("<hhh", *samples[0]))
    index = 1
    for size in blocks:
        deltas = [
            value - before
            for previous, sample in zip(samples[index - 1:index - 1 + size], samples[index:index + size])
            for before, value in zip(previous, sample)
        ]
        width = signed_width(deltas)
        packed = bytearray((len(deltas) * width + 7) // 8)
        position = 0
        for delta in deltas:
            raw = delta & ((1 << width) - 1)
            for bit in range(width):
                if raw >> bit & 1:
                    packed[position >> 3] |= 1 << (position & 7)
                position += 1
        payload += bytes([width, size]) + packed
        index += size
    return pmd_header(PMD_ACC, timestamp, 0x81) + bytes(payload)


def acc_sample(index):
    """The strap's movement at acceleration sample `index` (mG): smooth, with a little jitter so
    deltas need several bit widths."""
    return (
        round(300 * math.sin(index / 7)) + (index * 7919) % 23 - 11,
        round(150 * math.cos(index / 11)) - (index * 104729) % 17 + 8,
        1000 + round(40 * math.sin(index / 3)),
    )


class H10Strap(Strap):
    """A Polar H10: the Heart Rate service of the bed's straps and the PMD service. The control
    point reads 0F 05 00 (ECG and ACC); written, it answers by indication only while indications
    are on (as an H10: nothing otherwise). START streams ECG (73 samples of the synthetic ECG per
    frame, every 73/130 s) or acceleration (36 samples at the asked rate, raw type 1, every third
    frame delta-compressed) on the data characteristic, stamped by the strap's own clock; a link
    drop ends the streams. Everything the central did is logged in order (`events`), and every
    frame with when its last sample was taken and when it went out."""

    def __init__(self, link, name, address, mtu, ecg):
        super().__init__(link, name, address)
        self.device.gatt_server.max_mtu = mtu
        self.mtu = mtu
        self.ecg = ecg
        self.powered_at = time.monotonic()
        # Realtime = monotonic + this: the guest's clock hrbridge stamps with (no NTP in the guest).
        self.realtime_offset = time.time() - time.monotonic()
        self.events = []
        self.changed = asyncio.Event()
        self.pmd_frames = {PMD_ECG: [], PMD_ACC: []}
        self.next_sample = {PMD_ECG: 0, PMD_ACC: 0}
        self.streams = {}
        self.indications = False
        self.notifications = False
        self.control = Characteristic(
            PMD_CONTROL,
            Characteristic.Properties.READ | Characteristic.Properties.WRITE | Characteristic.Properties.INDICATE,
            Characteristic.READABLE | Characteristic.WRITEABLE,
            CharacteristicValue(read=lambda connection: bytes([0x0F, 0x05, 0x00]), write=self._on_write),
        )
        self.data = Characteristic(PMD_DATA, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
        self.device.add_services([Service(PMD_SERVICE, [self.control, self.data])])
        self.control.on("subscription", lambda bearer, notify, indicate: self._on_ccc("control", notify, indicate))
        self.data.on("subscription", lambda bearer, notify, indicate: self._on_ccc("data", notify, indicate))

    def event(self, name, **facts):
        self.events.append({"event": name, "at": time.time(), **facts})
        self.changed.set()

    def clock_ns(self, monotonic):
        return PMD_EPOCH_NS + round((monotonic - self.powered_at) * 1e9)

    def _on_connection(self, connection):
        super()._on_connection(connection)
        self.event("connected")
        connection.on("disconnection", lambda reason: self._on_link_lost())

    def _on_link_lost(self):
        # The H10 ends its PMD streams with the link; the central's CCCs are gone with it.
        for task in self.streams.values():
            task.cancel()
        self.streams.clear()
        self.indications = self.notifications = False
        self.event("disconnected")

    def _on_ccc(self, characteristic, notify, indicate):
        if characteristic == "control":
            self.indications = indicate
        else:
            self.notifications = notify
        self.event("ccc", characteristic=characteristic, notify=notify, indicate=indicate)

    def _on_write(self, connection, value):
        value = bytes(value)
        self.event("write", hex=value.hex())
        if not self.indications:
            self.event("unanswered", hex=value.hex())
            return
        # After the write's response: the answer comes as an indication.
        asyncio.get_running_loop().create_task(self._command(value))

    async def _command(self, value):
        op = value[0] if value else 0
        kind = value[1] if len(value) > 1 else 0
        status, settings = 0, b""
        if len(value) < 2:
            status = 4
        elif kind not in (PMD_ECG, PMD_ACC):
            status = 2
        elif op == 0x01:
            settings = PMD_SETTINGS[kind]
        elif op == 0x02:
            if kind in self.streams:
                status = 6
            else:
                rate, rest = 130, value[2:]
                while len(rest) >= 4:
                    if rest[0] == 0:
                        rate = int.from_bytes(rest[2:4], "little")
                    rest = rest[2 + 2 * rest[1]:]
                self.event("start", kind=kind, rate=rate)
                self.streams[kind] = asyncio.get_running_loop().create_task(self._stream(kind, rate))
        elif op == 0x03:
            task = self.streams.pop(kind, None)
            if task is not None:
                task.cancel()
            self.event("stop", kind=kind)
        else:
            status = 1
        answer = bytes([0xF0, op, kind, status, 0]) + settings
        self.event("answer", hex=answer.hex())
        try:
            await self.device.indicate_subscribers(self.control, answer)
        except Exception as error:  # the link went meanwhile
            log(f"{self.name}: answer not indicated: {error!r}")

    async def _stream(self, kind, rate):
        """Frames of one START until STOP or the link drops: sample n of this stream is taken at
        START + n / rate on the strap's clock; a frame goes out when its last sample is taken."""
        count = 73 if kind == PMD_ECG else 36
        origin = time.monotonic()
        origin_ns = self.clock_ns(origin)
        n = 0
        while True:
            due = origin + (n + count - 1) / rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            first = self.next_sample[kind]
            timestamp = origin_ns + round((n + count - 1) * 1e9 / rate)
            record = {"timestamp": timestamp, "first": first, "count": count, "sampledAt": self.realtime_offset + due}
            if kind == PMD_ECG:
                if first + count > len(self.ecg):
                    log(f"{self.name}: the synthetic ECG is used up")
                    return
                frame = ecg_frame(timestamp, self.ecg[first:first + count])
            else:
                samples = [acc_sample(index) for index in range(first, first + count)]
                compressed = len(self.pmd_frames[PMD_ACC]) % 3 == 2
                frame = acc_compressed_frame(timestamp, samples) if compressed else acc_raw_frame(timestamp, samples)
                record.update(compressed=compressed, x=[s[0] for s in samples], y=[s[1] for s in samples],
                              z=[s[2] for s in samples])
            record["sentAt"] = time.time()
            record["notified"] = self.notifications
            record["bytes"] = len(frame)
            # Counted as the notification is handed over: Bumble sends it from a task of its own,
            # which a STOP cancelling this one does not stop, so the frame still goes out.
            self.pmd_frames[kind].append(record)
            self.next_sample[kind] += count
            n += count
            self.changed.set()
            await self.device.notify_subscribers(self.data, frame)

    def starts(self, kind):
        return sum(1 for event in self.events if event["event"] == "start" and event["kind"] == kind)

    async def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                return predicate()
        return True

    def record(self):
        return {"address": self.address, "mtu": self.mtu, "events": self.events,
                "ecgFrames": self.pmd_frames[PMD_ECG], "accFrames": self.pmd_frames[PMD_ACC]}


def short_uuid(uuid):
    """A UUID as hrbridge's docs write it: "180D" for the Bluetooth base UUIDs, else in full."""
    text = uuid.to_hex_str()
    if len(text) == 32 and text.upper().endswith("00001000800000805F9B34FB") and text.startswith("0000"):
        return text[4:8].upper()
    return text.upper()


def advertising_fields(data_hex):
    """The AD structures of advertising data or a scan response that an app filters on."""
    data = bytes.fromhex(data_hex or "")
    fields = {"serviceUUIDs": [], "name": None, "appearance": None, "flags": None}
    index = 0
    while index < len(data) and data[index]:
        length = data[index]
        kind, value = data[index + 1], data[index + 2 : index + 1 + length]
        if kind in (0x02, 0x03):
            fields["serviceUUIDs"] += [f"{int.from_bytes(value[i:i + 2], 'little'):04X}" for i in range(0, len(value) - 1, 2)]
        elif kind in (0x08, 0x09):
            fields["name"] = value.decode(errors="replace")
        elif kind == 0x19:
            fields["appearance"] = int.from_bytes(value[:2], "little")
        elif kind == 0x01:
            fields["flags"] = value[0] if value else None
        index += 1 + length
    return fields


class App:
    """A phone app using hrbridge as its heart-rate sensor: a Bumble central on its own controller,
    on the link of the adapter hrbridge serves from. It scans for the Heart Rate advertisement,
    connects, discovers the services, reads 0x2A38 and subscribes to 0x2A37, keeping each
    notification as the raw bytes (RR compared exactly) with the time it arrived."""

    def __init__(self, link, name, address):
        self.name = name
        self.address = address
        self.controller = AppController(f"app {name}", link=link)
        self.device = Device(
            name=name, address=hci.Address(address), host=Host(self.controller, AsyncPipeSink(self.controller))
        )
        # Each notification: {"hex", "at" (monotonic), "phase"}; the phase is the bed's label
        # for the part of the scenario it arrived in.
        self.received = []
        self.phase = "first"
        self.advertisements = []
        self.connection = None
        self.connections = 0
        self.disconnections = []
        self.location = None
        self.services = []
        self.characteristics = []
        self.subscribed_at = []
        self.disconnected = asyncio.Event()
        self.changed = asyncio.Event()
        self.leaving = False

    async def power_on(self):
        await self.device.power_on()

    async def find(self, advertiser, timeout=60):
        """Scans (actively, as phones do) until the BlueZ controller `advertiser` advertises Heart
        Rate connectably; keeps what it advertised and returns its address."""
        addresses = {advertiser.public_address.to_string(False), advertiser.random_address.to_string(False)}
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            key = advertisement.address.to_string(False)
            seen = self.controller.seen.get(key)
            if found.done() or key not in addresses or seen is None or not advertisement.is_connectable:
                return
            if HEART_RATE_TEXT in advertising_fields(seen["data"])["serviceUUIDs"] + advertising_fields(seen["scanResponse"])["serviceUUIDs"]:
                found.set_result((advertisement.address, dict(seen)))

        started = time.monotonic()
        self.device.on("advertisement", on_advertisement)
        await self.device.start_scanning(legacy=True, active=True, filter_duplicates=False)
        try:
            address, seen = await asyncio.wait_for(found, timeout)
        finally:
            self.device.remove_listener("advertisement", on_advertisement)
            await self.device.stop_scanning()
        self.advertisements.append({
            "address": address.to_string(False), "data": seen["data"], "scanResponse": seen["scanResponse"],
            "advertising": advertising_fields(seen["data"]), "scanResponseFields": advertising_fields(seen["scanResponse"]),
            "afterSeconds": time.monotonic() - started, "at": time.monotonic(),
        })
        log(f"{self.name}: found {address} advertising {seen}")
        return address

    async def connect(self, advertiser, timeout=60):
        """Finds the advertisement, connects, reads 0x2A38 and subscribes to 0x2A37."""
        address = await self.find(advertiser, timeout)
        connection = await self.device.connect(address, transport=PhysicalTransport.LE, timeout=30)
        self.connection = connection
        self.connections += 1
        self.leaving = False
        self.disconnected.clear()
        connection.on("disconnection", lambda reason: self._on_disconnection(connection, reason))
        log(f"{self.name}: connected to {address}")
        peer = Peer(connection)
        await peer.discover_services()
        for service in peer.services:
            await peer.discover_characteristics(service=service)
        self.services = [short_uuid(service.uuid) for service in peer.services]
        self.characteristics = sorted({short_uuid(c.uuid) for service in peer.services for c in service.characteristics})
        heart_rate = [service for service in peer.services if short_uuid(service.uuid) == HEART_RATE_TEXT]
        if not heart_rate:
            raise RuntimeError(f"{self.name}: no Heart Rate service among {self.services}")
        characteristics = {short_uuid(c.uuid): c for c in heart_rate[0].characteristics}
        self.heart_rate_characteristics = characteristics
        if "2A38" in characteristics:
            self.location = (await characteristics["2A38"].read_value()).hex()
        await characteristics["2A37"].subscribe(self._on_notification)
        self.subscribed_at.append(time.monotonic())
        log(f"{self.name}: subscribed; services {self.services}, location {self.location}")

    async def write_control_point(self, value):
        """Writes the Heart Rate Control Point (with response): "ok", or the ATT error code."""
        characteristic = getattr(self, "heart_rate_characteristics", {}).get("2A39")
        if characteristic is None:
            return "absent"
        try:
            await characteristic.write_value(value, with_response=True)
        except ATT_Error as error:
            return int(error.error_code)
        return "ok"

    def _on_notification(self, value):
        self.received.append({"hex": bytes(value).hex(), "at": time.monotonic(), "phase": self.phase})
        self.changed.set()

    def _on_disconnection(self, connection, reason):
        log(f"{self.name}: disconnected (reason {reason})")
        self.disconnections.append({"reason": int(reason), "at": time.monotonic(), "byApp": self.leaving, "phase": self.phase})
        if self.connection is connection:
            self.connection = None
        self.disconnected.set()
        self.changed.set()

    async def disconnect(self):
        if self.connection is None:
            return
        self.leaving = True
        await self.connection.disconnect()
        await asyncio.wait_for(self.disconnected.wait(), 30)

    def frames(self, phase=None):
        return [entry for entry in self.received if phase is None or entry["phase"] == phase]

    async def wait_for_frames(self, count, phase, timeout=30):
        """Waits until `count` notifications arrived in `phase`; whether they did."""
        deadline = time.monotonic() + timeout
        while len(self.frames(phase)) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        return True

    def record(self):
        return {
            "name": self.name, "address": self.address, "received": self.received,
            "advertisements": self.advertisements, "connections": self.connections,
            "disconnections": self.disconnections, "location": self.location, "services": self.services,
            "characteristics": self.characteristics, "subscribedAt": self.subscribed_at,
        }


class Hrbridge:
    """An hrbridge process whose JSON lines are read as they come."""

    running = []

    def __init__(self, binary, folder, name):
        self.binary = binary
        self.folder = folder
        self.name = name
        self.lines = []
        # When each line was read (time.time(), the guest's CLOCK_REALTIME, as hrbridge's clock).
        self.read_at = []
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
            self.read_at.append(time.time())
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

    def peripheral(self, state=None):
        """The relay's peripheral lines (of one state)."""
        return [l for l in self.lines if l.get("event") == "peripheral" and (state is None or l.get("state") == state)]

    async def wait_for_peripheral(self, state, count=1, timeout=60):
        """Waits until the relay has printed `count` peripheral lines of `state`."""
        return await self.wait_for(lambda _: len(self.peripheral(state)) >= count, timeout)

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


# Scenarios that take longer than the default 300 s bound under TCG.
LIMITS = {"relay": 480, "relaydaemon": 420, "relaylimited": 420, "relayrestart": 420, "spoof": 420, "pmd": 480}


def decode_measurement(data):
    """A 0x2A37 value: heart rate, contact bits (flags bits 1-2), energy or None, RR intervals
    (1/1024 s); None when it is malformed (as hrbridge refuses it)."""
    if len(data) < 2:
        return None
    flags, index = data[0], 1
    if flags & 0x01:
        if len(data) < 3:
            return None
        rate, index = int.from_bytes(data[1:3], "little"), 3
    else:
        rate, index = data[1], 2
    energy = None
    if flags & 0x08:
        if len(data) < index + 2:
            return None
        energy, index = int.from_bytes(data[index:index + 2], "little"), index + 2
    rest = data[index:]
    if flags & 0x10:
        if len(rest) % 2:
            return None
        rr = [int.from_bytes(rest[i:i + 2], "little") for i in range(0, len(rest), 2)]
    elif rest:
        return None
    else:
        rr = []
    return {"heartRate": rate, "contact": (flags >> 1) & 0x03, "energy": energy, "rr": rr}


def notifications_for(frames):
    """How many notifications an app should get for `frames` relayed without energy: none for a
    malformed one, two for one that does not fit 20 bytes."""
    count = 0
    for frame in frames:
        decoded = decode_measurement(bytes.fromhex(frame))
        if decoded is None:
            continue
        size = 1 + (2 if bytes.fromhex(frame)[0] & 0x01 else 1) + 2 * len(decoded["rr"])
        count += 2 if size > 20 else 1
    return count


def latency_frames(count):
    """Frames with a heart rate each their own (60, 61, …) and the matching RR interval."""
    frames = []
    for index in range(count):
        rate = 60 + index % 190
        rr = round(60 * 1024 / rate)
        frames.append((bytes([0x16, rate]) + rr.to_bytes(2, "little")).hex())
    return frames


def frame_key(rate, rr):
    return (rate, tuple(rr))


def latencies(frames, sent_at, arrivals):
    """Seconds from the strap's send to each arrival of the same frame; arrivals are
    (heart rate, RR in 1/1024 s, time)."""
    when = {}
    for frame, at in zip(frames, sent_at):
        decoded = decode_measurement(bytes.fromhex(frame))
        if decoded is not None:
            when.setdefault(frame_key(decoded["heartRate"], decoded["rr"]), at)
    return [at - when[frame_key(rate, rr)] for rate, rr, at in arrivals if frame_key(rate, rr) in when]


def percentile(values, fraction):
    """Nearest rank."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def summary(values):
    return {"count": len(values), "p50": percentile(values, 0.5), "p99": percentile(values, 0.99),
            "max": max(values) if values else None, "values": values}


def app_arrivals(app, phase):
    out = []
    for entry in app.frames(phase):
        decoded = decode_measurement(bytes.fromhex(entry["hex"]))
        if decoded is not None:
            out.append((decoded["heartRate"], decoded["rr"], entry["at"]))
    return out


async def quietly(awaitable):
    """Clean-up that must not keep a scenario from writing its result."""
    try:
        return await awaitable
    except Exception as error:  # recorded in bed.log; the result says what happened before
        log(f"clean-up failed: {error!r}")
        return None


def cpu_seconds(pid):
    """utime + stime of a process (all its threads) in seconds."""
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pmd_clock_error(run, output, settle=30.0):
    """The clock model's error in this bed: bumble and hrbridge share the guest's CLOCK_REALTIME,
    so each frame's last sample has a true host time (when the strap took it, `sampledAt`). For
    each frame hrbridge printed, (t0 + (n-1)·interval) − that, in seconds, from `settle` s after the
    stream's first sample on; also against when the frame went out (`sentAt`)."""
    lines = []
    with open(output) as file:
        for text in file:
            try:
                lines.append(json.loads(text))
            except ValueError:
                pass
    out = {}
    for kind, frames in (("ecg", run["ecgFrames"]), ("acc", run["accFrames"])):
        by_time = {frame["timestamp"]: frame for frame in frames}
        placed, sent = [], []
        if not frames:
            continue
        start = frames[0]["sampledAt"] - (frames[0]["count"] - 1) / (130 if kind == "ecg" else 50)
        for line in lines:
            if line.get("kind") != kind:
                continue
            frame = min(frames, key=lambda f: abs(f["timestamp"] - line["sensorTimestamp"]))
            if abs(frame["timestamp"] - line["sensorTimestamp"]) > 1000 or frame["sampledAt"] - start < settle:
                continue
            count = len(line["values"] if kind == "ecg" else line["x"])
            last = line["t0"] + (count - 1) * line["interval"]
            placed.append(last - frame["sampledAt"])
            sent.append(last - frame["sentAt"])
        out[kind] = {"sampled": summary(placed), "sent": summary(sent)}
    return out


class Bed:
    def __init__(self, out):
        self.out = out
        with open(os.path.join(out, "plan.json")) as file:
            self.plan = json.load(file)
        self.binary = self.plan["hrbridge"]
        self.frames = self.plan["frames"]
        # The relay's scenarios: the plan's frames and one too long for a 20-byte notification.
        self.relay_frames = self.plan.get("relayFrames", self.frames)
        self.bluetoothd = None
        self.links = []
        self.controllers = []
        # hci<index> -> (link, controller): each controller once, whichever scenario adds it first.
        self.adapters = {}
        # KernelExperimental UUIDs given to bluetoothd (-K); see SIMULTANEOUS_ROLES.
        self.kernel_experimental = []

    def folder(self, scenario):
        path = os.path.join(self.out, scenario)
        os.makedirs(path, exist_ok=True)
        return path

    # Nothing here may block the event loop: the Bumble controllers answer the kernel's HCI
    # commands on it, and bluetoothd waits on them while powering, stopping and connecting.
    async def start_bluetoothd(self):
        logfile = open(os.path.join(self.out, "bluetoothd.log"), "a")
        options = [f"--kernel={','.join(self.kernel_experimental)}"] if self.kernel_experimental else []
        self.bluetoothd = await asyncio.create_subprocess_exec(
            BLUETOOTHD, "-n", "-d", *options, stdout=logfile, stderr=logfile
        )
        log(f"bluetoothd started (pid {self.bluetoothd.pid}) {' '.join(options)}")

    async def use_bluetoothd(self, simultaneous_roles):
        """bluetoothd as a scenario needs it: with KernelExperimental naming LE simultaneous roles
        (Roles then lists "central-peripheral" where the kernel offers it) or as Debian ships it.
        Restarts it, and powers every adapter again, only when that changes."""
        wanted = [SIMULTANEOUS_ROLES] if simultaneous_roles else []
        if wanted == self.kernel_experimental:
            return
        await self.stop_bluetoothd()
        self.kernel_experimental = wanted
        await self.start_bluetoothd()
        for index in sorted(self.adapters):
            await self.power(f"hci{index}")

    async def roles(self, adapter):
        """Adapter1.Roles as bluetoothd reports it."""
        reader = await asyncio.create_subprocess_exec(
            "busctl", "--system", "--json=short", "get-property", "org.bluez", f"/org/bluez/{adapter}",
            "org.bluez.Adapter1", "Roles", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        output, _ = await reader.communicate()
        try:
            return json.loads(output)["data"]
        except (ValueError, KeyError):
            return None

    async def stop_bluetoothd(self):
        self.bluetoothd.terminate()
        try:
            await asyncio.wait_for(self.bluetoothd.wait(), 60)
        except asyncio.TimeoutError:
            self.bluetoothd.kill()
            await self.bluetoothd.wait()
        log("bluetoothd stopped")

    async def add_controller(self, index, le_states=None):
        """A controller BlueZ sees as hci<index>, on a link of its own; the same one again when a
        scenario before added it (it stays for the rest of the run)."""
        if index in self.adapters:
            return self.adapters[index][0]
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
        if le_states is not None:
            controller.le_states = le_states
        self.links.append(link)
        self.controllers.append((transport, controller))
        self.adapters[index] = (link, controller)
        await self.power(f"hci{index}")
        return link

    def controller(self, index):
        return self.adapters[index][1]

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
        daemon = Hrbridge(self.binary + "d", folder, "daemon")
        await daemon.start("--config", config)
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

    async def spoof(self, link):
        """A neighbour's radio repeats a configured strap's address with Polar heart-rate data (the
        real strap is nowhere). hrbridged with a class and auto-join follows the readings, but with
        the default join_via = "link" nobody signs in; the same with join_via = "broadcast" signs
        the athlete in, which shows the first run could have failed.

        Each run has a spoofer of its own address: bluetoothd keeps a device it found, and a daemon
        starting then tries to connect to it before it scans. Removing the device between runs
        instead (RemoveDevice while bluetoothd still tore down a half-made link to it) once hit a
        list corruption in the guest kernel's L2CAP teardown, which took every later scenario down."""
        folder = self.folder("spoof")
        runs = {}
        spoofers = []
        try:
            for index, join_via in enumerate(("link", "broadcast")):
                address = f"C1:00:00:00:00:{0x0A + index:02X}"
                spoofer = await self.strap(link, f"Polar H10 {0x0A + index:02X}", address, broadcast=True)
                spoofers.append(spoofer)

                done = asyncio.Event()

                async def readings(spoofer=spoofer, done=done):
                    # A new reading every 2 s until the run is done. Ended by `done`, not only by
                    # cancel(): a cancel landing in Bumble's advertising commands was once lost,
                    # and this loop went on until the scenario's limit (202 readings sent).
                    rate = 90
                    while not done.is_set():
                        await asyncio.sleep(2)
                        if done.is_set():
                            return
                        rate = 90 + (rate - 89) % 80
                        await spoofer.broadcast_reading(rate)

                broadcasting = asyncio.create_task(readings())
                try:
                    runs[join_via] = await self.spoof_run(spoofer, folder, join_via)
                finally:
                    done.set()
                    broadcasting.cancel()
                    # Bounded: a reading stuck in Bumble must not hold the scenario.
                    _, pending = await asyncio.wait({broadcasting}, timeout=15)
                    if pending:
                        log(f"spoof: {spoofer.address}'s readings did not end within 15 s")
                    await quietly(asyncio.wait_for(spoofer.go_away(), 15))
        finally:
            self.result(
                "spoof", addresses=[spoofer.address for spoofer in spoofers],
                sent=sum(len(spoofer.broadcast_sent) for spoofer in spoofers),
                connections=sum(spoofer.connections for spoofer in spoofers), **runs,
            )

    async def spoof_run(self, spoofer, folder, join_via):
        """One daemon with a class: the facts of its run under `join_via` ("link": the default,
        left out of the configuration)."""
        socket_path = f"/run/hrbridge-spoof-{join_via}.sock"
        store = f"/run/hrbridge-spoof-{join_via}.sqlite"
        config = os.path.join(folder, f"{join_via}.toml")
        with open(config, "w") as file:
            file.write(
                f'[adapter]\nkind = "bluez"\n\n[store]\npath = "{store}"\n\n'
                f'[api]\nsocket = "{socket_path}"\n\n'
                f'[[athletes]]\nid = "ada"\nname = "Ada"\nmax_hr = 190\n\n'
                f'[[sensors]]\naddress = "{spoofer.address}"\nathlete = "ada"\n\n'
                f'[class]\nauto_join = true\n'
                + (f'join_via = "{join_via}"\n' if join_via != "link" else "")
            )
        daemon = Hrbridge(self.binary + "d", folder, join_via)
        await daemon.start("--config", config)
        api = UnixHTTP(socket_path)
        facts = {}
        try:
            # The API answers once the daemon runs: the class starts then.
            deadline = time.monotonic() + 60
            status, started = await api.request("POST", "/v1/class", {})
            while status == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.3)
                status, started = await api.request("POST", "/v1/class", {})
            facts["classStatus"] = status
            start = started.get("start") if isinstance(started, dict) else None
            facts["classStart"] = start
            # Readiness: the daemon has heard three readings of the spoofer dated after the class
            # started (a connect attempt to the strap pauses scanning for up to 30 s), or, under
            # join_via = "broadcast", the athlete is in.
            heard = []
            signed_in_at = None
            sensor_target = f"/v1/sensors/{urllib.parse.quote(spoofer.address)}"
            began = time.monotonic()
            deadline = began + 120
            while start and time.monotonic() < deadline:
                _, sensor = await api.request("GET", sensor_target)
                if isinstance(sensor, dict) and sensor.get("via") == "advertisement":
                    reading = (sensor.get("lastMeasurement"), sensor.get("heartRate"))
                    if reading[0] and reading[0] > start and reading not in heard:
                        heard.append(reading)
                        if len(heard) == 1:
                            facts["firstHeardSeconds"] = time.monotonic() - began
                _, running = await api.request("GET", "/v1/class")
                members = running.get("members", []) if isinstance(running, dict) else []
                if signed_in_at is None and any(m.get("state") == "in" for m in members):
                    signed_in_at = time.monotonic()
                    facts["signedInSeconds"] = signed_in_at - began
                if len(heard) >= 3 and (join_via == "link" or signed_in_at is not None):
                    break
                await asyncio.sleep(0.5)
            facts["heard"] = [{"lastMeasurement": at, "heartRate": rate} for at, rate in heard]
            facts["readySeconds"] = time.monotonic() - began
            facts["sensor"] = (await api.request("GET", sensor_target))[1]
            class_status, snapshot = await api.request("GET", "/v1/class")
            facts["class"] = snapshot
            facts["members"] = snapshot.get("members") if isinstance(snapshot, dict) else None
            sessions_status, sessions = await api.request("GET", "/v1/sessions")
            facts["sessions"] = sessions.get("sessions") if isinstance(sessions, dict) else None
            facts["sessionsStatus"] = sessions_status
        finally:
            facts["exit"] = await daemon.stop()
            for path in (store, store + "-wal", store + "-shm"):
                if os.path.exists(path):
                    os.remove(path)
        return facts

    # Polar's raw signals (PMD) through real bluetoothd ------------------------------------

    async def h10(self, link, name, address, mtu, ecg):
        strap = H10Strap(link, name, address, mtu, ecg)
        await strap.power_on()
        await strap.advertise()
        return strap

    def pmd_facts(self, strap, monitor):
        """What the strap did, and when each of hrbridge's lines was read."""
        first = {}
        for line, at in zip(monitor.lines, monitor.read_at):
            if line.get("kind") in ("ecg", "acc"):
                first.setdefault(line["kind"], at)
        return {**strap.record(), "exit": monitor.process.returncode if monitor.process else None,
                "firstFrameReadAt": first}

    async def pmd_run(self, link, folder, ecg, name, address, mtu, body, facts):
        """One monitor --ecg --acc --acc-rate 50 --json against a new H10 (MTU `mtu`); `body`
        drives it and adds to `facts` (kept if it fails); the monitor ends with SIGINT (it
        writes STOP first)."""
        strap = await self.h10(link, f"Polar H10 {address[-2:]}", address, mtu, ecg)
        monitor = Hrbridge(self.binary, folder, name)
        try:
            await monitor.start("monitor", "--ecg", "--acc", "--acc-rate", "50", "--json", strap.address)
            await body(strap, monitor, facts)
        finally:
            await quietly(monitor.stop())
            await quietly(strap.go_away())
            facts.update(self.pmd_facts(strap, monitor))

    async def pmd_started(self, strap, count=1, timeout=120):
        """Readiness: both streams started `count` times at the strap."""
        return await strap.wait_for(lambda: strap.starts(PMD_ECG) >= count and strap.starts(PMD_ACC) >= count, timeout)

    async def pmd(self, link):
        """A Polar H10 with the PMD service, driven by hrbridge's PMD client through bluetoothd:
        (a) MTU 232, ECG and ACC for ~20 s; (b) MTU 185, refused; (c) the link dropped mid-stream
        and back; (d) 75 s of streaming for the clock model's error."""
        folder = self.folder("pmd")
        with open(os.path.join(self.out, "pmd-ecg.json")) as file:
            ecg = json.load(file)["microvolts"]
        facts = {}
        try:
            async def stream(strap, monitor, run):
                run["started"] = await self.pmd_started(strap)
                await asyncio.sleep(20)  # the streamed duration, not a wait for readiness

            await self.pmd_run(link, folder, ecg, "stream", "C1:00:00:00:00:20", 232, stream, facts.setdefault("stream", {}))

            async def small(strap, monitor, run):
                run["refused"] = await monitor.wait_for(
                    lambda lines: sum(1 for l in lines if l.get("event") == "waveformFailed") >= 2, 120)

            await self.pmd_run(link, folder, ecg, "small", "C1:00:00:00:00:21", 185, small, facts.setdefault("small", {}))

            async def drop(strap, monitor, run):
                run["started"] = await self.pmd_started(strap)
                frames = lambda: sum(1 for l in monitor.lines if l.get("kind") == "ecg")
                await monitor.wait_for(lambda _: frames() >= 8, 60)
                run["droppedAt"] = time.time()
                await strap.go_away()
                await asyncio.sleep(3.0)  # out of range for 3 s
                await strap.advertise()
                run["restarted"] = await self.pmd_started(strap, 2)
                before = frames()
                await monitor.wait_for(lambda _: frames() >= before + 8, 60)

            await self.pmd_run(link, folder, ecg, "drop", "C1:00:00:00:00:22", 232, drop, facts.setdefault("drop", {}))

            async def clock(strap, monitor, run):
                run["started"] = await self.pmd_started(strap)
                await asyncio.sleep(75)  # the streamed duration: 30 s settling, then 45 s measured

            await self.pmd_run(link, folder, ecg, "clock", "C1:00:00:00:00:23", 232, clock, facts.setdefault("clock", {}))
            facts["clockError"] = pmd_clock_error(facts["clock"], os.path.join(folder, "clock.out"))
        finally:
            self.result("pmd", **facts)

    # The relay: hrbridge as a heart-rate sensor for apps -----------------------------------

    async def relay_ready(self, relay, strap, apps, advertiser, facts):
        """The strap subscribed, the relay advertising, every app connected and subscribed, and
        the relay told to notify."""
        await asyncio.wait_for(strap.subscribed.wait(), 90)
        facts["advertising"] = await relay.wait_for_peripheral("advertising", 1, 90)
        for app in apps:
            await app.connect(advertiser)
        facts["notifying"] = await relay.wait_for_peripheral("notifying", 1, 30)

    async def relay_phase(self, strap, apps, phase, frames, interval=0.05, timeout=30):
        """Sends `frames` while the apps record `phase`; waits until each app has what it should get."""
        for app in apps:
            app.phase = phase
        start = len(strap.sent)
        sent = await strap.send(frames, interval)
        expected = notifications_for(strap.sent[start:])
        complete = [await app.wait_for_frames(expected, phase, timeout) for app in apps]
        return {"sent": strap.sent[start:], "sentAt": strap.sent_at[start:], "count": sent,
                "expected": expected, "complete": complete}

    async def relay(self, first_link):
        """Two adapters: the strap on hci0, hrbridge relay placed by itself on hci1, two apps."""
        folder = self.folder("relay")
        facts = {"name": "hrbridge Relay"}
        await self.use_bluetoothd(simultaneous_roles=False)
        second_link = await self.add_controller(1)
        strap = await self.strap(first_link, "HRM-Relay 10", "C1:00:00:00:00:10")
        apps = [App(second_link, "App 1", "D1:00:00:00:00:01"), App(second_link, "App 2", "D1:00:00:00:00:02")]
        for app in apps:
            await app.power_on()
        relay = Hrbridge(self.binary, folder, "relay")
        try:
            await relay.start("relay", strap.address, "--json", "--name", facts["name"])
            await self.relay_ready(relay, strap, apps, self.controller(1), facts)
            facts["first"] = await self.relay_phase(strap, apps, "first", self.relay_frames)
            # One app leaves and comes back: it finds the advertisement again.
            left = time.monotonic()
            await apps[1].disconnect()
            await apps[1].connect(self.controller(1))
            facts["rejoinSeconds"] = time.monotonic() - left
            facts["second"] = await self.relay_phase(strap, apps, "second", self.frames)
            # 4 Hz to both apps: latency strap -> app per frame, and the relay's CPU time.
            frames = latency_frames(120)
            cpu_before, wall_before = cpu_seconds(relay.process.pid), time.monotonic()
            facts["latency"] = await self.relay_phase(strap, apps, "latency", frames, interval=0.25)
            cpu, wall = cpu_seconds(relay.process.pid) - cpu_before, time.monotonic() - wall_before
            await asyncio.sleep(1.0)  # anything late or repeated still lands in "latency"
            every = []
            for app in apps:
                values = latencies(facts["latency"]["sent"], facts["latency"]["sentAt"], app_arrivals(app, "latency"))
                facts.setdefault("latencyByApp", {})[app.name] = summary(values)
                every += values
            facts["latencySeconds"] = summary(every)
            facts["cpu"] = {"seconds": cpu, "windowSeconds": wall, "perMinute": cpu / wall * 60 if wall else None,
                            "clockTicks": os.sysconf("SC_CLK_TCK")}
            facts["roles"] = {adapter: await self.roles(adapter) for adapter in ("hci0", "hci1")}
        finally:
            facts["exit"] = await quietly(relay.stop())
            facts["doctorExit"] = await quietly(Hrbridge(self.binary, folder, "doctor").run("doctor", "--json"))
            for app in apps:
                await quietly(app.disconnect())
            await quietly(strap.go_away())
            self.result("relay", strap=strap.address, apps=[app.record() for app in apps], **facts)

    async def relay_one(self, first_link):
        """One adapter in both roles (its controller can do both at once, and bluetoothd says so):
        the strap goes out of range and comes back while the app stays connected."""
        folder = self.folder("relay1")
        facts = {"name": "hrbridge One"}
        await self.use_bluetoothd(simultaneous_roles=True)
        strap = await self.strap(first_link, "HRM-Relay1 11", "C1:00:00:00:00:11")
        app = App(first_link, "App 3", "D1:00:00:00:00:03")
        await app.power_on()
        relay = Hrbridge(self.binary, folder, "relay")
        try:
            facts["roles"] = {"hci0": await self.roles("hci0")}
            # With --energy: energy expended passed on, and the control point served.
            await relay.start("relay", strap.address, "--json", "--adapter", "hci0", "--peripheral-adapter", "hci0",
                              "--name", facts["name"], "--energy")
            await self.relay_ready(relay, strap, [app], self.controller(0), facts)
            half = len(self.frames) // 2
            facts["first"] = await self.relay_phase(strap, [app], "first", self.frames[:half])
            facts["controlPoint"] = {
                "reset": await app.write_control_point(bytes([0x01])),
                "other": await app.write_control_point(bytes([0x02])),
            }
            facts["controlPointLines"] = await relay.wait_for(
                lambda _: relay.peripheral("energyReset") and relay.peripheral("refusedWrite"), 10
            )
            facts["awaySeconds"] = 4.0
            await strap.go_away()
            await asyncio.sleep(facts["awaySeconds"])
            back = time.monotonic()
            await strap.advertise()
            await asyncio.wait_for(strap.subscribed.wait(), 90)
            facts["resubscribedAfterSeconds"] = time.monotonic() - back
            facts["second"] = await self.relay_phase(strap, [app], "second", self.frames[half:])
            await asyncio.sleep(1.0)
        finally:
            facts["exit"] = await quietly(relay.stop())
            await quietly(app.disconnect())
            await quietly(strap.go_away())
            self.result("relay1", strap=strap.address, apps=[app.record()], **facts)

    async def relay_simulated(self, first_link):
        """relay --simulate on hci0: the simulator's strap, relayed to an app."""
        folder = self.folder("relaysim")
        facts = {"duration": 40}
        app = App(first_link, "App 4", "D1:00:00:00:00:04")
        await app.power_on()
        relay = Hrbridge(self.binary, folder, "relay")
        try:
            await relay.start("relay", "--simulate", "--json", "--peripheral-adapter", "hci0",
                              "--duration", str(facts["duration"]), "--name", "hrbridge Sim")
            facts["advertising"] = await relay.wait_for_peripheral("advertising", 1, 90)
            await app.connect(self.controller(0))
            try:
                await asyncio.wait_for(relay.process.wait(), facts["duration"] + 60)
            except asyncio.TimeoutError:
                facts["endedByItself"] = False
            else:
                facts["endedByItself"] = True
        finally:
            facts["exit"] = await quietly(relay.stop())
            await quietly(app.disconnect())
            self.result("relaysim", apps=[app.record()], **facts)

    async def relay_restart(self, first_link):
        """bluetoothd restarted under a running relay (two adapters): it registers and advertises
        again; the app, whose link the restart cut, reconnects and gets frames again."""
        folder = self.folder("relayrestart")
        facts = {"name": "hrbridge Restart"}
        second_link = await self.add_controller(1)
        strap = await self.strap(first_link, "HRM-Restart 13", "C1:00:00:00:00:13")
        app = App(second_link, "App 6", "D1:00:00:00:00:06")
        await app.power_on()
        relay = Hrbridge(self.binary, folder, "relay")
        try:
            await relay.start("relay", strap.address, "--json", "--adapter", "hci0", "--peripheral-adapter", "hci1",
                              "--name", facts["name"])
            await self.relay_ready(relay, strap, [app], self.controller(1), facts)
            half = len(self.frames) // 2
            facts["first"] = await self.relay_phase(strap, [app], "first", self.frames[:half])
            before = {state: len(relay.peripheral(state)) for state in ("registered", "advertising", "notifying")}
            facts["linesBeforeRestart"] = len(relay.lines)
            await self.stop_bluetoothd()
            await self.start_bluetoothd()
            for index in sorted(self.adapters):
                await self.power(f"hci{index}")
            restarted = time.monotonic()
            await asyncio.wait_for(app.disconnected.wait(), 60)
            await asyncio.wait_for(strap.disconnected.wait(), 60)
            facts["registeredAgain"] = await relay.wait_for_peripheral("registered", before["registered"] + 1, 90)
            facts["advertisingAgain"] = await relay.wait_for_peripheral("advertising", before["advertising"] + 1, 60)
            facts["advertisingAfterSeconds"] = time.monotonic() - restarted
            app.phase = "second"
            await app.connect(self.controller(1))
            await asyncio.wait_for(strap.subscribed.wait(), 90)
            facts["notifyingAgain"] = await relay.wait_for_peripheral("notifying", before["notifying"] + 1, 30)
            facts["second"] = await self.relay_phase(strap, [app], "second", self.frames[half:])
            await asyncio.sleep(1.0)
        finally:
            facts["exit"] = await quietly(relay.stop())
            await quietly(app.disconnect())
            await quietly(strap.go_away())
            self.result("relayrestart", strap=strap.address, apps=[app.record()], **facts)

    async def relay_daemon(self, first_link):
        """hrbridged with [peripheral] following the session: an app gets the session
        strap's frames, a WebSocket client on /v1/ws gets them too; latencies of both."""
        folder = self.folder("relaydaemon")
        facts = {"name": "hrbridge Daemon"}
        await self.add_controller(1)
        strap = await self.strap(first_link, "HRM-Relay D 14", "C1:00:00:00:00:14")
        socket_path = "/run/hrbridge-relay-api.sock"
        store = "/run/hrbridge-relay-store.sqlite"
        config = os.path.join(folder, "config.toml")
        with open(config, "w") as file:
            file.write(
                f'[adapter]\nkind = "bluez"\n\n[store]\npath = "{store}"\n\n'
                f'[api]\nsocket = "{socket_path}"\n\n'
                f'[[athletes]]\nid = "ada"\nname = "Ada"\nmax_hr = 190\n\n'
                f'[[sensors]]\naddress = "{strap.address}"\nathlete = "ada"\n\n'
                f'[peripheral]\nenabled = true\nsource = "session"\nname = "{facts["name"]}"\n'
                f'forward_rr = true\nforward_energy = false\n'
            )
        daemon = Hrbridge(self.binary + "d", folder, "daemon")
        api = UnixHTTP(socket_path)
        app = None
        messages = []
        reader = None
        try:
            await daemon.start("--config", config)
            await asyncio.wait_for(strap.subscribed.wait(), 90)
            facts["sensorReady"] = await api.wait_for_state(f"/v1/sensors/{urllib.parse.quote(strap.address)}", "ready", 60)
            facts["advertising"] = await self.wait_for_health(api, lambda p: p.get("advertising") is True, 90)
            _, health = await api.request("GET", "/v1/health")
            facts["healthBefore"] = health
            adapter = ((health or {}).get("peripheral") or {}).get("adapter") if isinstance(health, dict) else None
            facts["adapter"] = adapter
            if facts["advertising"] and adapter:
                # The app goes where the daemon placed the peripheral.
                index = int(adapter.removeprefix("hci"))
                app = App(self.adapters[index][0], "App 7", "D1:00:00:00:00:07")
                await app.power_on()
                await app.connect(self.controller(index))
            # Without the peripheral the API's stream is still measured.
            apps = [app] if app else []
            reader = asyncio.create_task(self.read_websocket(socket_path, messages))
            status, session = await api.request("POST", "/v1/sessions", {"sensors": [strap.address], "activity": "running"})
            facts["sessionStatus"] = status
            session_id = session.get("id") if isinstance(session, dict) else None
            facts["sessionRunning"] = bool(session_id) and await api.wait_for_state(f"/v1/sessions/{session_id}", "running", 30)
            # Readiness: the app's subscription reached hrbridge, and it follows the session's strap.
            facts["following"] = bool(app) and await self.wait_for_health(
                api, lambda p: p.get("notifying") is True and p.get("following") == strap.address, 60
            )
            facts["first"] = await self.relay_phase(strap, apps, "first", self.frames, interval=0.5)
            facts["latency"] = await self.relay_phase(strap, apps, "latency", latency_frames(40), interval=0.25)
            await asyncio.sleep(1.0)
            measured = [
                (m["heartRate"], [round(s * 1024) for s in m.get("rrIntervals") or []], at)
                for m, at in messages
                if m.get("kind") == "measurement" and m.get("sensor") == strap.address and "heartRate" in m
            ]
            frames, sent_at = facts["latency"]["sent"], facts["latency"]["sentAt"]
            if app:
                facts["latencyApp"] = summary(latencies(frames, sent_at, app_arrivals(app, "latency")))
            facts["latencyWebSocket"] = summary(latencies(frames, sent_at, measured))
            facts["websocketMeasurements"] = [{"heartRate": r, "rr": rr} for r, rr, _ in measured]
            _, facts["health"] = await api.request("GET", "/v1/health")
            if session_id:
                await api.request("POST", f"/v1/sessions/{session_id}/stop", {})
        finally:
            if reader is not None:
                reader.cancel()
                try:
                    await reader
                except (asyncio.CancelledError, Exception):
                    pass  # cancelled here, or the socket closed with the daemon
            facts["exit"] = await quietly(daemon.stop())
            if app is not None:
                await quietly(app.disconnect())
            await quietly(strap.go_away())
            self.result("relaydaemon", strap=strap.address, apps=[app.record()] if app else [], **facts)

    async def wait_for_health(self, api, predicate, timeout):
        """Polls GET /v1/health until its peripheral object satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        peripheral = None
        while time.monotonic() < deadline:
            status, body = await api.request("GET", "/v1/health")
            peripheral = body.get("peripheral") if status == 200 and isinstance(body, dict) else None
            if isinstance(peripheral, dict) and predicate(peripheral):
                return True
            await asyncio.sleep(0.3)
        log(f"health's peripheral never matched: {peripheral!r}")
        return False

    async def read_websocket(self, socket_path, messages):
        """Every message of /v1/ws over the API's Unix socket, with the time it arrived."""
        from websockets.asyncio.client import unix_connect

        async with unix_connect(socket_path, "ws://localhost/v1/ws", max_queue=None) as websocket:
            async for message in websocket:
                at = time.monotonic()
                try:
                    messages.append((json.loads(message), at))
                except ValueError:
                    pass

    async def relay_limited(self, first_link):
        """A controller without simultaneous central and peripheral LE states: doctor says so,
        and when the strap drops while an app is connected, the relay lets the app go, gets the
        strap back, and advertises again."""
        folder = self.folder("relaylimited")
        facts = {"name": "hrbridge Limited"}
        await self.use_bluetoothd(simultaneous_roles=True)
        link = await self.add_controller(2, le_states=LIMITED_LE_STATES)
        facts["doctorExit"] = await Hrbridge(self.binary, folder, "doctor").run("doctor", "--json")
        facts["roles"] = {f"hci{index}": await self.roles(f"hci{index}") for index in sorted(self.adapters)}
        strap = await self.strap(link, "HRM-Limited 12", "C1:00:00:00:00:12")
        app = App(link, "App 5", "D1:00:00:00:00:05")
        await app.power_on()
        relay = Hrbridge(self.binary, folder, "relay")
        try:
            await relay.start("relay", strap.address, "--json", "--adapter", "hci2", "--peripheral-adapter", "hci2",
                              "--name", facts["name"])
            await self.relay_ready(relay, strap, [app], self.controller(2), facts)
            half = len(self.frames) // 2
            facts["first"] = await self.relay_phase(strap, [app], "first", self.frames[:half])
            facts["awaySeconds"] = 4.0
            away = time.monotonic()
            facts["awayAt"] = away
            await strap.go_away()
            await asyncio.sleep(facts["awaySeconds"])
            await strap.advertise()
            facts["backAt"] = time.monotonic()
            try:
                await asyncio.wait_for(app.disconnected.wait(), 60)
            except asyncio.TimeoutError:
                facts["appLetGo"] = False
            else:
                facts["appLetGo"] = True
            try:
                await asyncio.wait_for(strap.subscribed.wait(), 90)
            except asyncio.TimeoutError:
                facts["strapBack"] = False
            else:
                facts["strapBack"] = True
                facts["strapBackAt"] = time.monotonic()
            facts["advertisingAgain"] = await relay.wait_for_peripheral("advertising", 2, 60)
            app.phase = "second"
            await app.connect(self.controller(2))
            facts["appBackAt"] = time.monotonic()
            # bluetoothd answers the app's CCC write before hrbridge has its StartNotify.
            facts["notifyingAgain"] = await relay.wait_for_peripheral("notifying", 2, 30)
            facts["second"] = await self.relay_phase(strap, [app], "second", self.frames[half:])
            await asyncio.sleep(1.0)
        finally:
            facts["exit"] = await quietly(relay.stop())
            await quietly(app.disconnect())
            await quietly(strap.go_away())
            self.result("relaylimited", strap=strap.address, apps=[app.record()], **facts)

    async def run(self, scenarios):
        await self.start_bluetoothd()
        first_link = await self.add_controller(0)
        available = {
            "scan": self.scan, "monitor": self.monitor, "pair": self.pair, "away": self.away,
            "restart": self.restart, "adapters": self.two_adapters, "daemon": self.daemon,
            "broadcast": self.broadcast, "spoof": self.spoof, "relay": self.relay, "relay1": self.relay_one,
            "relaysim": self.relay_simulated, "relayrestart": self.relay_restart,
            "relaydaemon": self.relay_daemon, "relaylimited": self.relay_limited, "pmd": self.pmd,
        }
        for name in scenarios:
            if self.bluetoothd.returncode is not None:
                # The guest kernel's Bluetooth stack (Debian 6.1) sometimes hits a list corruption
                # in hci_chan_del as bluetoothd releases an L2CAP socket, and bluetoothd dies with
                # it: the scenarios after it get a bluetoothd again rather than failing with it.
                log(f"bluetoothd died (exit {self.bluetoothd.returncode}): started again for {name}")
                await self.start_bluetoothd()
                for index in sorted(self.adapters):
                    await self.power(f"hci{index}")
            log(f"scenario {name}")
            started = time.monotonic()
            try:
                await asyncio.wait_for(available[name](first_link), LIMITS.get(name, 300))
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
