"""hrbridge's dbusmock template: python-dbusmock's bluez5 plus fault injection.

Loaded with `python -m dbusmock --system --template Tests/Fixtures/bluez/faults.py`. Adds, on `/`,
the interface org.hrbridge.Faults:

- AddHeartRateService(o device): a Heart Rate service with a notifying 0x2A37 characteristic
  (StartNotify, StopNotify, AcquireNotify on a SEQPACKET socketpair, and Send(ay) to write a
  datagram to that socket), announced with InterfacesAdded as bluetoothd does.
- Announce(o path): InterfacesAdded for an object (dbusmock's AddObject does not emit it).
- FailConnect(o device, s fault, u times): the device's next `times` Connect calls fail with
  `fault`, then Connect works again. Faults: abort-by-local (Connected flickers true then false,
  then org.bluez.Error.Failed "le-connection-abort-by-local"), in-progress (InProgress, the link
  never comes up), br-connection-canceled, no-reply (the call blocks past the client's timeout),
  authentication-failed (AuthenticationFailed: the strap forgot the bond).
- LimitLinks(s adapter, u count): the adapter's controller holds `count` links; one more Connect
  fails with org.bluez.Error.Failed "le-connection-concurrent-connection-limit".
"""

import time

import dbus
from dbusmock import mockobject
from dbusmock.templates import bluez5
from dbusmock.templates.bluez5 import *  # noqa: F401,F403  (bluez5's methods, attached by dbusmock)

BUS_NAME = bluez5.BUS_NAME
MAIN_OBJ = bluez5.MAIN_OBJ
SYSTEM_BUS = bluez5.SYSTEM_BUS
IS_OBJECT_MANAGER = bluez5.IS_OBJECT_MANAGER

FAULTS_IFACE = "org.hrbridge.Faults"
DEVICE_IFACE = "org.bluez.Device1"
HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"

FAULTS = {
    "abort-by-local": ("org.bluez.Error.Failed", "le-connection-abort-by-local"),
    "in-progress": ("org.bluez.Error.InProgress", "In Progress"),
    "br-connection-canceled": ("org.bluez.Error.Failed", "br-connection-canceled"),
    "authentication-failed": ("org.bluez.Error.AuthenticationFailed", "Authentication Failed"),
}


def load(mock, parameters):
    bluez5.load(mock, parameters)


def set_connected(device, connected):
    device.connected = connected
    device.UpdateProperties(DEVICE_IFACE, {"Connected": dbus.Boolean(connected)})


@dbus.service.method(FAULTS_IFACE, in_signature="o", out_signature="")
def Announce(self, path):
    mockobject.objects["/"].object_manager_emit_added(str(path))


@dbus.service.method(FAULTS_IFACE, in_signature="o", out_signature="")
def AddHeartRateService(self, device_path):
    service = str(device_path) + "/service0010"
    characteristic = service + "/char0011"
    self.AddObject(
        service,
        "org.bluez.GattService1",
        {"UUID": HEART_RATE_SERVICE, "Primary": dbus.Boolean(True), "Device": dbus.ObjectPath(device_path)},
        [],
    )
    self.AddObject(
        characteristic,
        "org.bluez.GattCharacteristic1",
        {
            "UUID": HEART_RATE_MEASUREMENT,
            "Service": dbus.ObjectPath(service),
            "Flags": dbus.Array(["notify"], signature="s"),
            "Value": dbus.Array([], signature="y"),
            "Notifying": dbus.Boolean(False),
            "NotifyAcquired": dbus.Boolean(False),
        },
        [
            ("StartNotify", "", "", ""),
            ("StopNotify", "", "", ""),
            (
                "AcquireNotify",
                "a{sv}",
                "hq",
                "import socket\n"
                "mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
                "self.notify_socket = mine\nself.notify_peer = theirs\n"
                "ret = (dbus.types.UnixFd(theirs.fileno()), dbus.UInt16(23))",
            ),
        ],
    )
    mockobject.objects[characteristic].AddMethod(
        "org.hrbridge.Test", "Send", "ay", "", "self.notify_socket.send(bytes(args[0]))"
    )
    Announce(self, service)
    Announce(self, characteristic)


@dbus.service.method(FAULTS_IFACE, in_signature="osu", out_signature="")
def FailConnect(self, device_path, fault, times):
    device = mockobject.objects[str(device_path)]
    if fault not in FAULTS and fault != "no-reply":
        raise dbus.exceptions.DBusException("unknown fault " + fault, name="org.hrbridge.Error.UnknownFault")
    device.failures_left = int(times)
    device.fault = str(fault)

    def connect(device):
        if device.failures_left > 0:
            device.failures_left -= 1
            if device.fault == "no-reply":
                time.sleep(2.5)
                return
            if device.fault == "abort-by-local":
                set_connected(device, True)
                set_connected(device, False)
            name, message = FAULTS[device.fault]
            raise dbus.exceptions.DBusException(message, name=name)
        if device.connected:
            raise dbus.exceptions.DBusException("Already Connected", name="org.bluez.Error.AlreadyConnected")
        set_connected(device, True)

    # dbusmock runs a method's code when it is a function, with the object as its argument.
    device.AddMethod(DEVICE_IFACE, "Connect", "", "", "")
    in_signature, out_signature, _, method = device.methods[DEVICE_IFACE]["Connect"]
    device.methods[DEVICE_IFACE]["Connect"] = (in_signature, out_signature, connect, method)


@dbus.service.method(FAULTS_IFACE, in_signature="su", out_signature="")
def LimitLinks(self, adapter_name, count):
    """The adapter's controller holds `count` LE links: a Connect beyond them fails as a full
    controller's does (org.bluez.Error.Failed "le-connection-concurrent-connection-limit").
    Applies to the devices the adapter has now."""
    prefix = "/org/bluez/" + str(adapter_name) + "/"
    limit = int(count)

    def devices():
        return [obj for path, obj in mockobject.objects.items() if path.startswith(prefix) and path.count("/") == 4]

    def connect(device):
        if device.connected:
            raise dbus.exceptions.DBusException("Already Connected", name="org.bluez.Error.AlreadyConnected")
        if sum(1 for other in devices() if getattr(other, "connected", False)) >= limit:
            raise dbus.exceptions.DBusException(
                "le-connection-concurrent-connection-limit", name="org.bluez.Error.Failed"
            )
        set_connected(device, True)

    for device in devices():
        device.AddMethod(DEVICE_IFACE, "Connect", "", "", "")
        in_signature, out_signature, _, method = device.methods[DEVICE_IFACE]["Connect"]
        device.methods[DEVICE_IFACE]["Connect"] = (in_signature, out_signature, connect, method)
