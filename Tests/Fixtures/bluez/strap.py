#!/usr/bin/env python3
"""A heart-rate strap for tests: a BlueZ-API GATT server application (Heart Rate, Battery,
Device Information) that advertises through LEAdvertisingManager1 and notifies a scripted
sequence of 0x2A37 frames once a client subscribes.

It speaks only the public BlueZ server API, so it runs against BlueZoo (or a real bluetoothd).

Usage: strap.py --adapter-address AA:.. --frames FILE [--interval S] [--name NAME]
                [--service 180d] [--control FIFO]
--gated: nothing is sent until the first "resume", subscribed or not.
--pmd: also Polar's Measurement Data service, as an H10: the control point (read: 0F 05 00, write,
indicate) answers GET/START/STOP only while its indications are on, and a START sends ECG frames
(73 samples of sin(2πk/130) × 1000 µV, k the sample index) or 16-bit acceleration frames (36
samples of x = k, y = −k, z = 1000 mG) every frame's duration on the data characteristic.
--mtu N: the MTU its characteristics report (BlueZoo shows it to the client as the link's).
Frames: one hex frame per line. Control lines (from the FIFO): "pause", "resume", "hold" (pause until the next StartNotify),
"disconnect" (drop the link from the strap's side), "pmd-reset" (end the PMD streams, as a link
drop does), "pmd-garbage" (two malformed PMD frames), "pmd-hold" (keep control point answers back
until "pmd-release"), "pmd-start-settings HEX" (settings bytes in every later START answer), "quit".
Prints "ready" once registered, "subscribed" on StartNotify, "sent N" after each frame,
"written UUID HEX" for each write, "pmd-frame KIND N" after each PMD frame.
"""
import argparse
import math
import os
import struct
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHRC = "org.bluez.GattCharacteristic1"
ADV = "org.bluez.LEAdvertisement1"


def uuid128(short):
    if len(short) > 8:
        return short.lower()
    return "0000%s-0000-1000-8000-00805f9b34fb" % short.lower()


PMD_SERVICE = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"
PMD_CONTROL = "fb005c81-02e7-f387-1cad-8acd2d8df0c8"
PMD_DATA = "fb005c82-02e7-f387-1cad-8acd2d8df0c8"
# The H10's clock at power-on (2019-01-01 in ns since 2000-01-01), plus the sample's time.
PMD_EPOCH_NS = 599_616_000 * 1_000_000_000


def say(text):
    print(text, flush=True)


class Application(dbus.service.Object):
    def __init__(self, bus, path):
        self.path = path
        self.services = []
        dbus.service.Object.__init__(self, bus, path)

    @dbus.service.method(OM, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        objects = {}
        for service in self.services:
            objects[dbus.ObjectPath(service.path)] = service.properties()
            for chrc in service.characteristics:
                objects[dbus.ObjectPath(chrc.path)] = chrc.properties()
        return objects


class Service(dbus.service.Object):
    def __init__(self, bus, app, index, uuid):
        self.path = "%s/service%d" % (app.path, index)
        self.uuid = uuid128(uuid)
        self.characteristics = []
        dbus.service.Object.__init__(self, bus, self.path)
        app.services.append(self)

    def properties(self):
        return {GATT_SERVICE: {"UUID": self.uuid, "Primary": dbus.Boolean(True)}}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[GATT_SERVICE]


class Characteristic(dbus.service.Object):
    def __init__(self, bus, service, index, uuid, flags, value=b""):
        self.path = "%s/char%d" % (service.path, index)
        self.uuid = uuid128(uuid)
        self.service = service
        self.flags = flags
        self.value = bytes(value)
        self.notifying = False
        self.on_start = None
        self.on_write = None
        self.mtu = None
        # What a read returns when it is not the last notified value (PMD: the features).
        self.read_value = None
        self.written = []
        dbus.service.Object.__init__(self, bus, self.path)
        service.characteristics.append(self)

    def properties(self):
        return {
            GATT_CHRC: {
                "UUID": self.uuid,
                "Service": dbus.ObjectPath(self.service.path),
                "Flags": dbus.Array(self.flags, signature="s"),
                "Value": dbus.Array(self.value, signature="y"),
                "Notifying": dbus.Boolean(self.notifying),
            }
            | ({"MTU": dbus.UInt16(self.mtu)} if self.mtu else {})
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[GATT_CHRC]

    @dbus.service.method(GATT_CHRC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.Array(self.read_value if self.read_value is not None else self.value, signature="y")

    @dbus.service.method(GATT_CHRC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        self.written.append(bytes(value))
        say("written %s %s" % (self.uuid[4:8], bytes(value).hex()))
        if self.on_write:
            self.on_write(bytes(value))

    @dbus.service.method(GATT_CHRC)
    def StartNotify(self):
        self.notifying = True
        self.PropertiesChanged(GATT_CHRC, {"Notifying": dbus.Boolean(True)}, [])
        say("subscribed %s" % self.uuid[4:8])
        if self.on_start:
            self.on_start()

    @dbus.service.method(GATT_CHRC)
    def StopNotify(self):
        self.notifying = False
        self.PropertiesChanged(GATT_CHRC, {"Notifying": dbus.Boolean(False)}, [])
        say("unsubscribed %s" % self.uuid[4:8])

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def notify(self, value):
        self.value = bytes(value)
        self.PropertiesChanged(GATT_CHRC, {"Value": dbus.Array(self.value, signature="y")}, [])


class Advertisement(dbus.service.Object):
    def __init__(self, bus, path, name, uuids):
        self.path = path
        self.name = name
        self.uuids = uuids
        dbus.service.Object.__init__(self, bus, path)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "Type": "peripheral",
            "ServiceUUIDs": dbus.Array([uuid128(u) for u in self.uuids], signature="s"),
            "LocalName": self.name,
            "Discoverable": dbus.Boolean(True),
        }

    @dbus.service.method(ADV)
    def Release(self):
        pass


def adapter_path(bus, address):
    manager = dbus.Interface(bus.get_object(BLUEZ, "/"), OM)
    for path, interfaces in manager.GetManagedObjects().items():
        adapter = interfaces.get("org.bluez.Adapter1")
        if adapter and str(adapter["Address"]).upper() == address.upper():
            return path
    raise SystemExit("no adapter with address %s" % address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter-address", required=True)
    parser.add_argument("--frames", required=True)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--name", default="Test Strap")
    parser.add_argument("--service", default="180d")
    parser.add_argument("--control")
    parser.add_argument("--gated", action="store_true", help="send nothing until the first resume")
    parser.add_argument("--pmd", action="store_true", help="add the PMD service (raw ECG and acceleration)")
    parser.add_argument("--mtu", type=int, help="the MTU the characteristics report")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    path = adapter_path(bus, args.adapter_address)
    dbus.Interface(bus.get_object(BLUEZ, path), PROPS).Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))

    frames = [bytes.fromhex(line.strip()) for line in open(args.frames) if line.strip()]
    app = Application(bus, "/org/hrbridge/strap")
    heart = Service(bus, app, 0, args.service)
    measurement = Characteristic(bus, heart, 0, "2a37" if args.service == "180d" else "2a6e", ["notify"])
    if args.service == "180d":
        Characteristic(bus, heart, 1, "2a38", ["read"], b"\x01")
        Characteristic(bus, heart, 2, "2a39", ["write"])
        battery = Service(bus, app, 1, "180f")
        Characteristic(bus, battery, 0, "2a19", ["read", "notify"], b"\x5a")
        info = Service(bus, app, 2, "180a")
        Characteristic(bus, info, 0, "2a29", ["read"], b"hrbridge\x00\x00")
        Characteristic(bus, info, 1, "2a24", ["read"], b"Test Strap")
    advertisement = Advertisement(bus, "/org/hrbridge/advertisement", args.name, [args.service])
    pmd_streams = {}
    # "pmd-hold": answers kept back (a list) until "pmd-release"; settings added to START answers.
    pmd_control = {"held": None, "start_settings": b""}
    if args.pmd:
        pmd = Service(bus, app, 3, PMD_SERVICE)
        control_point = Characteristic(bus, pmd, 0, PMD_CONTROL, ["read", "write", "indicate"], b"\x0f\x05\x00")
        control_point.read_value = b"\x0f\x05\x00"
        data = Characteristic(bus, pmd, 1, PMD_DATA, ["notify"])
        for characteristic in pmd.characteristics + heart.characteristics:
            characteristic.mtu = args.mtu

        def pmd_frame(kind):
            stream = pmd_streams.get(kind)
            if stream is None:
                return False
            if data.notifying:
                count = 73 if kind == 0 else 36
                first = stream["next"]
                if kind == 0:
                    payload = b"".join(
                        struct.pack("<i", round(1000 * math.sin(2 * math.pi * k / 130)))[:3]
                        for k in range(first, first + count))
                    rate, frame_type = 130, 0
                else:
                    payload = b"".join(struct.pack("<hhh", k, -k, 1000) for k in range(first, first + count))
                    rate, frame_type = stream["rate"], 1
                last_ns = PMD_EPOCH_NS + (first + count - 1) * 1_000_000_000 // rate
                data.notify(bytes([kind]) + struct.pack("<Q", last_ns) + bytes([frame_type]) + payload)
                stream["next"] += count
                stream["sent"] += 1
                say("pmd-frame %s %d" % ("ecg" if kind == 0 else "acc", stream["sent"]))
            return True

        def answer(op, kind, status, settings=b""):
            if op == 2 and status == 0:
                settings += pmd_control["start_settings"]
            if pmd_control["held"] is not None:
                pmd_control["held"].append((op, kind, status, settings))
                say("held %02x %02x" % (op, kind))
                return
            # An indication reaches the client only while it has them on.
            if control_point.notifying:
                control_point.notify(bytes([0xF0, op, kind, status, 0]) + settings)
            else:
                say("unanswered %02x %02x" % (op, kind))

        def on_write(value):
            if len(value) < 2:
                return answer(value[0] if value else 0, 0, 4)
            op, kind = value[0], value[1]
            if kind not in (0, 2):
                return answer(op, kind, 2)
            if op == 1:
                settings = b"\x00\x01\x82\x00\x01\x01\x0e\x00" if kind == 0 else b"\x00\x04\x19\x00\x32\x00\x64\x00\xc8\x00\x01\x01\x10\x00\x02\x03\x02\x00\x04\x00\x08\x00"
                answer(op, kind, 0, settings)
            elif op == 2:
                if kind in pmd_streams:
                    return answer(op, kind, 6)
                rate = 130
                rest = value[2:]
                while len(rest) >= 4:
                    if rest[0] == 0:
                        rate = rest[2] | rest[3] << 8
                    rest = rest[4:]
                pmd_streams[kind] = {"next": 0, "sent": 0, "rate": rate}
                answer(op, kind, 0)
                say("pmd-start %s %d" % ("ecg" if kind == 0 else "acc", rate))
                count = 73 if kind == 0 else 36
                GLib.timeout_add(int(1000 * count / rate), pmd_frame, kind)
            elif op == 3:
                # A frame already on its way when STOP arrives reaches the client before the answer.
                pmd_frame(kind)
                pmd_streams.pop(kind, None)
                answer(op, kind, 0)
                say("pmd-stop %s" % ("ecg" if kind == 0 else "acc"))
            else:
                answer(op, kind, 1)

        control_point.on_write = on_write

    # --gated: nothing is sent, subscribed or not, until the first "resume".
    state = {"next": 0, "paused": False, "timer": None, "gated": args.gated}

    def send():
        if state["paused"] or not measurement.notifying:
            state["timer"] = None
            return False
        if state["next"] >= len(frames):
            say("done")
            state["timer"] = None
            return False
        measurement.notify(frames[state["next"]])
        state["next"] += 1
        say("sent %d" % state["next"])
        return True

    def start_sending():
        if state["gated"]:
            return
        state["paused"] = False
        if state["timer"] is None:
            state["timer"] = GLib.timeout_add(int(args.interval * 1000), send)

    measurement.on_start = start_sending
    loop = GLib.MainLoop()

    def control(source, condition):
        line = source.readline()
        if not line:
            return True
        command = line.strip()
        if command == "pause":
            state["paused"] = True
        elif command == "resume":
            state["gated"] = False
            state["paused"] = False
            start_sending()
        elif command == "hold":
            # Stop sending until a client subscribes again (after a reconnect).
            state["paused"] = True
            say("holding at %d" % state["next"])
        elif command == "disconnect":
            # Drop the link from the strap's side, as a strap taken off or out of range does.
            manager = dbus.Interface(bus.get_object(BLUEZ, "/"), OM)
            for device_path, interfaces in manager.GetManagedObjects().items():
                device = interfaces.get("org.bluez.Device1")
                if device and device_path.startswith(path + "/") and device.get("Connected"):
                    dbus.Interface(bus.get_object(BLUEZ, device_path), "org.bluez.Device1").Disconnect()
                    say("disconnected %s" % device_path)
            measurement.notifying = False
            # The H10 ends its PMD streams with the link.
            pmd_streams.clear()
        elif command == "pmd-garbage" and args.pmd:
            # Two frames a strict decoder must refuse: a cut header, and an ECG frame with a partial sample.
            data.notify(b"\x00\x01\x02")
            data.notify(b"\x00" + struct.pack("<Q", PMD_EPOCH_NS) + b"\x00\x01\x02\x03\x04")
            say("pmd-garbage")
        elif command == "pmd-hold" and args.pmd:
            pmd_control["held"] = []
            say("pmd-hold")
        elif command == "pmd-release" and args.pmd:
            held, pmd_control["held"] = pmd_control["held"] or [], None
            for op, kind, status, settings in held:
                if control_point.notifying:
                    control_point.notify(bytes([0xF0, op, kind, status, 0]) + settings)
            say("pmd-release %d" % len(held))
        elif command.startswith("pmd-start-settings ") and args.pmd:
            pmd_control["start_settings"] = bytes.fromhex(command.split(" ", 1)[1])
            say("pmd-start-settings")
        elif command == "pmd-reset":
            # The link is about to drop (the harness drops it at the central): the strap ends its streams.
            pmd_streams.clear()
            say("pmd-reset")
        elif command == "quit":
            loop.quit()
        return True

    if args.control:
        fd = os.open(args.control, os.O_RDWR | os.O_NONBLOCK)
        GLib.io_add_watch(os.fdopen(fd, "r"), GLib.IO_IN, control)

    gatt = dbus.Interface(bus.get_object(BLUEZ, path), "org.bluez.GattManager1")
    advertising = dbus.Interface(bus.get_object(BLUEZ, path), "org.bluez.LEAdvertisingManager1")

    def registered():
        say("ready")

    def failed(error):
        say("error %s" % error)
        loop.quit()

    gatt.RegisterApplication(app.path, {}, reply_handler=lambda: None, error_handler=failed)
    advertising.RegisterAdvertisement(advertisement.path, {}, reply_handler=registered, error_handler=failed)
    loop.run()


if __name__ == "__main__":
    main()
