"""Writes seed messages for the D-Bus fuzzer: BlueZ-like signals and replies marshalled by GLib
(an independent implementation of the wire format). usage: dbus_seeds.py DIRECTORY"""
import os
import sys

from gi.repository import Gio, GLib

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, message):
    message.set_serial(1)
    with open(os.path.join(out, name), "wb") as f:
        f.write(message.to_blob(Gio.DBusCapabilityFlags.UNIX_FD_PASSING))


value = Gio.DBusMessage.new_signal("/org/bluez/hci0/dev_11_22_33_44_55_66/service0010/char0011",
                                   "org.freedesktop.DBus.Properties", "PropertiesChanged")
value.set_body(GLib.Variant("(sa{sv}as)", ("org.bluez.GattCharacteristic1",
                                           {"Value": GLib.Variant("ay", b"\x16\x48\x00\x04")}, [])))
write("properties-changed-value", value)

added = Gio.DBusMessage.new_signal("/", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")
added.set_body(GLib.Variant("(oa{sa{sv}})", ("/org/bluez/hci0/dev_11_22_33_44_55_66", {
    "org.bluez.Device1": {"Address": GLib.Variant("s", "11:22:33:44:55:66"), "Name": GLib.Variant("s", "Strap"),
                          "RSSI": GLib.Variant("n", -60), "UUIDs": GLib.Variant("as", ["0000180d-0000-1000-8000-00805f9b34fb"]),
                          "Connected": GLib.Variant("b", True), "ManufacturerData": GLib.Variant("a{qv}", {0x6B: GLib.Variant("ay", b"\x01\x02")})}})))
write("interfaces-added", added)

call = Gio.DBusMessage.new_method_call("org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter")
call.set_body(GLib.Variant("(a{sv})", ({"UUIDs": GLib.Variant("as", ["180d"]), "Transport": GLib.Variant("s", "le"),
                                         "RSSI": GLib.Variant("n", -90), "Pathloss": GLib.Variant("q", 5),
                                         "Score": GLib.Variant("(iuxtd)", (-1, 2, -3, 4, 0.5))},)))
write("method-call", call)

owner = Gio.DBusMessage.new_signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged")
owner.set_body(GLib.Variant("(sss)", ("org.bluez", ":1.4", "")))
write("name-owner-changed", owner)
