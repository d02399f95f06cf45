import DBus
import Foundation
import GATT

/// Layers 3–6 over the system bus: bluetoothd, D-Bus access, adapters, known straps.
enum BusChecks {
    static func run(connection: DBusConnection, bluezVersion: String?) async -> [DoctorCheck] {
        // 3. bluetoothd
        let owner: String?
        do {
            owner = try await connection.nameOwner(of: "org.bluez")
        } catch {
            return [DoctorCheck(name: "bluetoothd", status: .fail, detail: "cannot ask the bus: \(error)")]
        }
        guard let owner else {
            return [
                DoctorCheck(
                    name: "bluetoothd", status: .fail,
                    detail: "org.bluez is not on the system bus: bluetoothd is not running",
                    fix: "sudo systemctl start bluetooth (install it with: sudo apt-get install bluez)")
            ]
        }
        var checks = [versionCheck(owner: owner, version: bluezVersion)]

        // 4. D-Bus access
        let objects: [String: DBusValue]
        do {
            let reply = try await connection.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
            objects = reply.first?.objectPathDictionary ?? [:]
        } catch {
            checks.append(accessFailure(error, what: "read BlueZ's objects"))
            return checks
        }
        checks.append(await agentCheck(connection))

        // 5. Adapters, 6. straps
        let adapters = objects.keys.filter { objects[$0]?.stringDictionary?["org.bluez.Adapter1"] != nil }.sorted()
        if adapters.isEmpty {
            checks.append(
                DoctorCheck(
                    name: "adapters", status: .fail, detail: "BlueZ has no Bluetooth adapter",
                    fix: "see the kernel and rfkill checks above; then: sudo systemctl restart bluetooth"))
        }
        for path in adapters {
            // LE links the controller holds now: a controller has ~5–10; the bridge uses every adapter.
            let links = objects.filter { devicePath, interfaces in
                devicePath.hasPrefix(path + "/dev_") && !devicePath.dropFirst(path.count + 1).contains("/")
                    && interfaces.stringDictionary?["org.bluez.Device1"]?.stringDictionary?["Connected"]?.bool == true
            }.count
            checks.append(
                adapterCheck(
                    path: path, properties: objects[path]?.stringDictionary?["org.bluez.Adapter1"]?.stringDictionary,
                    links: links))
        }
        let kernel = PeripheralRoleCheck.kernelRelease()
        for path in adapters {
            let facts = PeripheralRoleCheck.facts(
                path: path, interfaces: objects[path]?.stringDictionary ?? [:], adapterCount: adapters.count,
                kernel: kernel)
            checks.append(PeripheralRoleCheck.check(facts))
        }
        checks.append(contentsOf: strapChecks(objects))
        return checks
    }

    static func versionCheck(owner: String, version: String?) -> DoctorCheck {
        guard let version, let number = Self.versionNumber(version) else {
            return DoctorCheck(
                name: "bluetoothd", status: .warn,
                detail: "running (\(owner)); version unknown (bluetoothctl not found)",
                fix: "sudo apt-get install bluez")
        }
        if number < 5.46 {
            return DoctorCheck(
                name: "bluetoothd", status: .fail,
                detail:
                    "running (\(owner)), BlueZ \(version): too old (no AcquireNotify before 5.46, no Battery1 before 5.48)",
                fix: "upgrade BlueZ: sudo apt-get install --only-upgrade bluez")
        }
        if number < 5.65 {
            return DoctorCheck(
                name: "bluetoothd", status: .warn,
                detail: "running (\(owner)), BlueZ \(version): no Bonded property before 5.65, so lost bonds go unseen",
                fix: "upgrade BlueZ when you can: sudo apt-get install --only-upgrade bluez")
        }
        return DoctorCheck(
            name: "bluetoothd", status: .ok,
            detail: "running (\(owner)), BlueZ \(version): AcquireNotify, Battery1 and Bonded available")
    }

    /// 5.66 → 5.66, "5.7" → 5.07, so versions compare as numbers.
    static func versionNumber(_ text: String) -> Double? {
        let parts = text.split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2 else { return nil }
        return Double(parts[0]) + Double(parts[1]) / 100
    }

    static func accessFailure(_ error: DBusError, what: String) -> DoctorCheck {
        if error.name == DBusError.accessDeniedName {
            return DoctorCheck(
                name: "dbus-access", status: .fail,
                detail: "the D-Bus policy refuses this user to \(what): \(error.message)",
                fix:
                    "sudo usermod -aG bluetooth $USER (then log in again): BlueZ's policy lets the bluetooth group talk to org.bluez"
            )
        }
        return DoctorCheck(name: "dbus-access", status: .fail, detail: "cannot \(what): \(error)")
    }

    /// Can this user register the pairing agent the daemon needs?
    static func agentCheck(_ connection: DBusConnection) async -> DoctorCheck {
        let path = "/org/hrbridge/doctor_agent"
        do {
            try connection.export(path: path) { _ in .success([]) }
        } catch {
            return DoctorCheck(name: "dbus-access", status: .fail, detail: "cannot export an object: \(error)")
        }
        defer { connection.unexport(path: path) }
        do {
            _ = try await connection.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                member: "RegisterAgent", arguments: [.objectPath(path), .string("NoInputNoOutput")])
            _ = try? await connection.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                member: "UnregisterAgent", arguments: [.objectPath(path)])
        } catch  where error.name == DBusError.accessDeniedName {
            return accessFailure(error, what: "register a pairing agent")
        } catch {
            return DoctorCheck(
                name: "dbus-access", status: .warn,
                detail: "BlueZ objects readable; registering a pairing agent failed: \(error)")
        }
        return DoctorCheck(
            name: "dbus-access", status: .ok, detail: "BlueZ objects readable; pairing agent can register")
    }

    static func adapterCheck(path: String, properties: [String: DBusValue]?, links: Int = 0) -> DoctorCheck {
        let name = "adapter " + (path.split(separator: "/").last.map(String.init) ?? path)
        let properties = properties ?? [:]
        let powered = properties["Powered"]?.bool ?? false
        let discovering = properties["Discovering"]?.bool ?? false
        let powerState = properties["PowerState"]?.string
        let roles = properties["Roles"]?.arrayElements?.compactMap(\.string)
        var facts = [powered ? "powered" : "off", discovering ? "discovering" : "not discovering"]
        if let address = properties["Address"]?.string { facts.insert(address, at: 0) }
        if let powerState { facts.append("PowerState \(powerState)") }
        if let roles { facts.append("roles \(roles.joined(separator: ","))") }
        facts.append("\(links) link\(links == 1 ? "" : "s") in use")
        let detail = facts.joined(separator: ", ")
        if powerState == "off-blocked" {
            return DoctorCheck(name: name, status: .fail, detail: detail, fix: RfkillCheck.unblockFix)
        }
        if !powered {
            // `power on` acts on bluetoothctl's default controller: this one is selected first.
            let select = properties["Address"]?.string.map { "bluetoothctl select \($0) && " } ?? ""
            return DoctorCheck(name: name, status: .warn, detail: detail, fix: select + "bluetoothctl power on")
        }
        if let roles, !roles.contains("central") {
            return DoctorCheck(
                name: name, status: .fail, detail: detail + ": this adapter cannot act as an LE central",
                fix: "use another adapter with --adapter")
        }
        return DoctorCheck(name: name, status: .ok, detail: detail)
    }

    /// Polar's broadcast heart rate in `Device1.ManufacturerData` (`a{qv}`), decoded or refused;
    /// `nil` when the device advertises none.
    static func polarBroadcast(_ manufacturerData: DBusValue?) -> Result<
        PolarHeartRateBroadcast, AdvertisementDecodingError
    >? {
        guard case .dictionary(_, _, let entries)? = manufacturerData?.unwrapped,
            let entry = entries.first(where: { $0.key.integer == Int(PolarHeartRateBroadcast.companyID) }),
            let bytes = entry.value.bytes
        else { return nil }
        return Result { () throws(AdvertisementDecodingError) in
            try PolarHeartRateBroadcast(company: PolarHeartRateBroadcast.companyID, bytes: bytes)
        }
    }

    static func strapChecks(_ objects: [String: DBusValue]) -> [DoctorCheck] {
        let heartRateService = GATTService.heartRate.uuid.description
        let measurement = GATTCharacteristic.heartRateMeasurement.uuid.description
        var checks: [DoctorCheck] = []
        for (path, value) in objects.sorted(by: { $0.key < $1.key }) {
            guard let device = value.stringDictionary?["org.bluez.Device1"]?.stringDictionary else { continue }
            let uuids = device["UUIDs"]?.arrayElements?.compactMap(\.string) ?? []
            let characteristic = objects.first { characteristicPath, interfaces in
                characteristicPath.hasPrefix(path + "/")
                    && interfaces.stringDictionary?["org.bluez.GattCharacteristic1"]?.stringDictionary?["UUID"]?.string
                        == measurement
            }
            let broadcast = polarBroadcast(device["ManufacturerData"])
            guard uuids.contains(heartRateService) || characteristic != nil || broadcast != nil else { continue }
            let address = device["Address"]?.string ?? path
            let label = device["Alias"]?.string ?? device["Name"]?.string ?? address
            let paired = device["Paired"]?.bool ?? false
            let trusted = device["Trusted"]?.bool ?? false
            let bonded = device["Bonded"]?.bool
            let connected = device["Connected"]?.bool ?? false
            let resolved = device["ServicesResolved"]?.bool ?? false
            let rssi = device["RSSI"]?.integer
            let notifying =
                characteristic?.value.stringDictionary?["org.bluez.GattCharacteristic1"]?.stringDictionary?[
                    "Notifying"]?
                .bool ?? false
            var facts: [String] = []
            if paired { facts.append("paired") }
            if trusted { facts.append("trusted") }
            if bonded == true { facts.append("bonded") }
            facts.append(connected ? "connected" : "not connected")
            if resolved { facts.append("services resolved") }
            if characteristic != nil { facts.append("0x2A37 present") }
            if notifying { facts.append("notifying") }
            if let rssi { facts.append("RSSI \(rssi) dBm (seen while scanning)") }
            // The mode hrbridge follows it in: a link carries everything, a broadcast heart rate only.
            if connected && notifying {
                facts.append("mode: connected (heart rate, RR intervals, battery)")
            } else if !connected, case .success(let reading)? = broadcast {
                facts.append(
                    "mode: advertisement (broadcasts \(reading.heartRate) bpm; heart rate only, no RR intervals or battery)"
                )
            }
            let detail = "\(label): " + facts.joined(separator: ", ")
            let name = "strap \(address)"
            let check: DoctorCheck
            if connected && resolved && characteristic == nil {
                check = DoctorCheck(
                    name: name, status: .fail,
                    detail: detail + "; no Heart Rate Measurement characteristic (stale GATT cache?)",
                    fix: "bluetoothctl remove \(address), then hrbridge pair \(address)")
            } else if connected && !resolved {
                check = DoctorCheck(
                    name: name, status: .warn, detail: detail + "; connected but services never resolved",
                    fix:
                        "bluetoothctl disconnect \(address); if it persists: bluetoothctl remove \(address), then pair again"
                )
            } else if connected && !notifying {
                check = DoctorCheck(
                    name: name, status: .warn, detail: detail + "; connected but nobody receives its measurements",
                    fix: "hrbridge monitor \(address)")
            } else if paired && bonded == false {
                check = DoctorCheck(
                    name: name, status: .warn,
                    detail: detail + "; paired but no bond keys here (bonded to another host?)",
                    fix: "bluetoothctl remove \(address), then hrbridge pair \(address)")
            } else if case .failure(let error)? = broadcast {
                check = DoctorCheck(
                    name: name, status: .warn, detail: detail + "; its Polar manufacturer data is not read: \(error)",
                    fix:
                        "connect it for its heart rate (hrbridge monitor \(address)); a layout hrbridge does not know is never guessed"
                )
            } else if !connected && (paired || trusted) && rssi == nil {
                check = DoctorCheck(
                    name: name, status: .warn, detail: detail + "; known here but not advertising",
                    fix: "wear it (moisten the electrodes) or replace its battery; then hrbridge scan")
            } else {
                check = DoctorCheck(name: name, status: .ok, detail: detail)
            }
            checks.append(check)
        }
        if checks.isEmpty {
            checks.append(
                DoctorCheck(
                    name: "straps", status: .warn, detail: "BlueZ knows no heart-rate strap",
                    fix: "hrbridge scan, then hrbridge pair ADDRESS"))
        }
        return checks
    }
}
