/// Object paths and addresses as BlueZ spells them.
enum BlueZPaths {
    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` for `AA:BB:CC:DD:EE:FF`.
    static func device(adapter: String, address: String) -> String {
        adapter + "/dev_" + address.uppercased().replacing(":", with: "_")
    }

    /// `AA:BB:CC:DD:EE:FF` from a device path.
    static func address(ofDevice path: String) -> String? {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        return String(last.dropFirst(4).replacing("_", with: ":"))
    }

    /// The device path a characteristic or service path belongs to.
    static func device(containing path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let index = parts.firstIndex(where: { $0.hasPrefix("dev_") }) else { return nil }
        return "/" + parts[...index].joined(separator: "/")
    }
}
