import CBluetooth
import Foundation

/// Layer 1: can an AF_BLUETOOTH HCI socket be opened, and which HCI devices exist (libbluetooth).
enum KernelCheck {
    static func run() -> [DoctorCheck] {
        let descriptor = cbt_open_hci_socket()
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(-descriptor))
            if -descriptor == EAFNOSUPPORT {
                return [
                    DoctorCheck(
                        name: "kernel", status: .fail,
                        detail: "the kernel has no Bluetooth support: socket(AF_BLUETOOTH) failed: \(reason)",
                        fix: "load the modules: sudo modprobe bluetooth btusb (or use a kernel built with CONFIG_BT)")
                ]
            }
            return [
                DoctorCheck(
                    name: "kernel", status: .fail, detail: "cannot open an HCI socket: \(reason)",
                    fix: -descriptor == EPERM || -descriptor == EACCES
                        ? "run as a user allowed to open Bluetooth sockets" : "check dmesg for Bluetooth errors")
            ]
        }
        defer { close(descriptor) }
        var devices = [cbt_device](repeating: cbt_device(), count: 16)
        let count = cbt_list_devices(descriptor, &devices, Int32(devices.count))
        guard count >= 0 else {
            return [
                DoctorCheck(
                    name: "kernel", status: .fail,
                    detail: "HCIGETDEVLIST failed: \(String(cString: strerror(-count)))",
                    fix: "check dmesg for Bluetooth errors")
            ]
        }
        guard count > 0 else {
            return [
                DoctorCheck(
                    name: "kernel", status: .fail, detail: "Bluetooth is in the kernel but there is no controller",
                    fix: "plug in a Bluetooth adapter, then check lsusb and dmesg | grep -i bluetooth")
            ]
        }
        var checks = [DoctorCheck(name: "kernel", status: .ok, detail: "HCI socket opened; \(count) controller(s)")]
        for device in devices.prefix(Int(count)) {
            let name = withUnsafeBytes(of: device.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let address = withUnsafeBytes(of: device.address) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let bus = cbt_bus_name(device.bus).map { String(cString: $0) } ?? "unknown bus"
            switch device.up {
            case 1:
                checks.append(DoctorCheck(name: "kernel \(name)", status: .ok, detail: "\(address), \(bus), up"))
            case 0:
                checks.append(
                    DoctorCheck(
                        name: "kernel \(name)", status: .warn, detail: "\(address), \(bus), down",
                        fix: "bluetoothctl select \(address) && bluetoothctl power on (bluetoothd brings it up)"))
            default:
                checks.append(
                    DoctorCheck(
                        name: "kernel hci\(device.dev_id)", status: .warn, detail: "hci_devinfo failed",
                        fix: "check dmesg for errors from this controller"))
            }
        }
        return checks
    }
}
