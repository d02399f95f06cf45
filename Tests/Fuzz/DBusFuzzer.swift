// libFuzzer entry point for the D-Bus value reader, built by scripts/fuzz.sh together with the
// DBus sources. Input is a whole marshalled message: libdbus validates it (as it does every
// message from the bus), then our reader walks every argument, the byte-property tap reads it in
// place, and the values are written into a new message and read back unchanged.
import CDBus

/// One input from libFuzzer; returns 0 (a failed check stops the process, which libFuzzer reports).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    let raw = UnsafeRawPointer(data).assumingMemoryBound(to: CChar.self)
    guard let pointer = dbus_message_demarshal(raw, Int32(clamping: size), &error) else { return 0 }
    let message = DBusMessage(owning: pointer)
    let values = message.arguments()
    _ = values.map(\.description)
    _ = DBusMessage.changedByteProperty(in: pointer, interface: "org.bluez.GattCharacteristic1", property: "Value")
    // Only a complete read can be written back: arguments() stops at the first value it cannot read.
    if let copy = DBusMessage.signal(path: "/fuzz", interface: "org.hrbridge.Fuzz", member: "Copy"),
        copy.append(values), copy.signature == message.signature
    {
        // Compared as text: a NaN double is not equal to itself.
        let again = copy.arguments()
        precondition(
            again.map(\.description) == values.map(\.description),
            "values changed through a round trip: \(values) → \(again)")
    }
    return 0
}
