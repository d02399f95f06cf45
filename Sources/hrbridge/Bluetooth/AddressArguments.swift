import ArgumentParser
import Sensors
import Wire

/// Bluetooth addresses typed on the command line: a typo is a usage error (64) at once, not a
/// 15-second search for a strap that cannot exist.
enum AddressArguments {
    static func check(_ addresses: [String], _ what: String = "address") throws {
        for address in addresses where !BluetoothAddress.isValid(address) {
            throw ValidationError(
                "\(what) '\(address.prefix(64))' is not a Bluetooth address such as C0:FF:EE:00:00:01")
        }
    }
}
