import DBus
import FoundationEssentials
import GATT
import Logging
import Sensors

#if canImport(Glibc)
    import Glibc
#endif

extension BlueZAdapter {
    /// Subscribes to the strap's measurement characteristics on `adapter` (never stacking a second
    /// `StartNotify`). Returns the error that makes the attempt fail, if any.
    func subscribe(_ address: String, on adapter: String) async -> BlueZError? {
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        for characteristic in Self.measurementCharacteristics {
            guard let characteristicPath = cache.path(of: characteristic, on: devicePath) else { continue }
            // BlueZ keeps a notify session per sender across reconnects and re-arms it by itself:
            // a second StartNotify would stack on peers that do not de-duplicate.
            guard let link = links[address], !link.subscribed.contains(characteristicPath),
                link.sockets[characteristicPath] == nil
            else { continue }
            if options.notifications == .acquireNotify,
                cache.properties(characteristicPath, ObjectCache.characteristicInterface)?["NotifyAcquired"] != nil
            {
                do {
                    try await acquire(characteristicPath, characteristic: characteristic, address: address)
                    continue
                } catch  where error.name == DBusError.limitsExceededName {
                    // No thread for the socket's reader: the socket was closed, and bluetoothd refuses
                    // StartNotify ("Notify acquired") until it has seen that, so no fallback now; the
                    // attempt fails, said, and the link's retry tries again.
                    return error
                } catch {
                    logger.info("AcquireNotify failed, using StartNotify", metadata: ["error": "\(error)"])
                }
            }
            // Subscribed before the call: the first notifications can come before StartNotify's reply.
            links[address]?.subscribed.insert(characteristicPath)
            do throws(BlueZError) {
                try await call(characteristicPath, ObjectCache.characteristicInterface, "StartNotify")
            } catch  where error.code == .inProgress {
            } catch {
                links[address]?.subscribed.remove(characteristicPath)
                return error
            }
        }
        return nil
    }

    /// Reads battery, body sensor location and device information once the strap streams, and
    /// reports them. Failures only leave a detail out: the measurements do not wait for these reads
    /// (six or more round trips, slow on a busy link).
    func readDetails(_ address: String, on adapter: String) async {
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        let identity = identity(address, on: adapter)
        var services = Set(
            Self.measurementCharacteristics.filter { cache.path(of: $0, on: devicePath) != nil }.map(\.service))
        // Battery: Battery1 where BlueZ claims 0x180F (≤ 5.79), else the characteristic.
        if let percent = cache.properties(devicePath, ObjectCache.batteryInterface)?["Percentage"]?.integer {
            broadcaster.yield(.batteryLevel(identity, UInt8(clamping: percent)))
            services.insert(.battery)
        } else if let batteryPath = cache.path(of: .batteryLevel, on: devicePath) {
            if let bytes = try? await read(batteryPath), let level = try? BatteryLevel(bytes: bytes) {
                broadcaster.yield(.batteryLevel(identity, level.percent))
            }
            let flags = cache.properties(batteryPath, ObjectCache.characteristicInterface)?["Flags"]?.arrayElements
            if flags?.contains(.string("notify")) == true, links[address]?.subscribed.contains(batteryPath) == false {
                links[address]?.subscribed.insert(batteryPath)
                if (try? await call(batteryPath, ObjectCache.characteristicInterface, "StartNotify")) == nil {
                    links[address]?.subscribed.remove(batteryPath)
                }
            }
            services.insert(.battery)
        }
        if let locationPath = cache.path(of: .bodySensorLocation, on: devicePath),
            let bytes = try? await read(locationPath), let location = try? BodySensorLocation(bytes: bytes),
            isReady(address, on: adapter)
        {
            broadcaster.yield(.bodySensorLocation(identity, location))
        }
        let information = await readDeviceInformation(devicePath)
        // The reads take time: a strap that dropped (or was disconnected) meanwhile reports nothing more.
        guard isReady(address, on: adapter) else { return }
        if information != DeviceInformation() {
            services.insert(.deviceInformation)
            broadcaster.yield(.deviceInformation(identity, information))
        }
        broadcaster.yield(.servicesReady(identity, services))
    }

    /// Whether the strap still streams through `adapter`.
    private func isReady(_ address: String, on adapter: String) -> Bool {
        if case .ready(adapter)? = links[address]?.machine.state { true } else { false }
    }

    private func readDeviceInformation(_ devicePath: String) async -> DeviceInformation {
        var information = DeviceInformation()
        for characteristic in DeviceInformationString.characteristics {
            guard let characteristicPath = cache.path(of: characteristic, on: devicePath),
                let bytes = try? await read(characteristicPath),
                let text = try? DeviceInformationString.decode(bytes, characteristic: characteristic)
            else { continue }
            switch characteristic {
            case .manufacturerName: information.manufacturerName = text
            case .modelNumber: information.modelNumber = text
            case .serialNumber: information.serialNumber = text
            case .firmwareRevision: information.firmwareRevision = text
            case .hardwareRevision: information.hardwareRevision = text
            default: information.softwareRevision = text
            }
        }
        return information
    }

    /// Takes the notification socket; each datagram is one frame. BlueZ closes it on disconnect.
    private func acquire(_ characteristicPath: String, characteristic: GATTCharacteristic, address: String)
        async throws(BlueZError)
    {
        let reply = try await call(
            characteristicPath, ObjectCache.characteristicInterface, "AcquireNotify", [.propertyMap([])],
            keepingDescriptors: true)
        guard reply.count == 2, case .unixFD(let descriptor) = reply[0], descriptor >= 0, let mtu = reply[1].integer
        else {
            // Ours either way: close what a malformed reply carried.
            for case .unixFD(let descriptor) in reply where descriptor >= 0 { close(descriptor) }
            throw BlueZError(DBusError.unexpectedReply("AcquireNotify returned \(reply)"))
        }
        let socket: NotificationSocket
        do {
            socket = try NotificationSocket(descriptor: descriptor, mtu: mtu)
        } catch {
            throw BlueZError(.threadUnavailable(error))
        }
        guard links[address] != nil else {
            socket.close()
            return
        }
        links[address]?.sockets[characteristicPath] = socket
        let identity = links[address]?.identity ?? SensorIdentity(adapter: "", address: address)
        let adapter = adapterName(ofDevice: characteristicPath) ?? identity.adapter
        let sender = SensorIdentity(adapter: adapter, address: address, name: identity.name)
        // A socket acquired on a bonded link stays on that link (encrypted) until it closes.
        let bonded = cache.deviceBonded(BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address))
        background.spawn { [weak self, broadcaster, clock, logger] in
            for await bytes in socket.datagrams {
                Self.deliver(
                    bytes, characteristic: characteristic, from: sender, bonded: bonded, to: broadcaster, clock: clock,
                    logger: logger)
            }
            await self?.socketClosed(characteristicPath, address: address)
        }
    }

    private func socketClosed(_ characteristicPath: String, address: String) {
        links[address]?.sockets[characteristicPath]?.close()
        links[address]?.sockets[characteristicPath] = nil
    }

    /// Decodes a notification and delivers the measurement, or the typed error with the frame's hex.
    /// Runs on the actor or on the D-Bus loop thread (the fast path).
    static func deliver(
        _ bytes: [UInt8], characteristic: GATTCharacteristic, from identity: SensorIdentity, bonded: Bool,
        to broadcaster: EventBroadcaster<SensorEvent>, clock: any WallClock, logger: Logger
    ) {
        do {
            let value = try GATTValue(characteristic: characteristic, bytes: bytes)
            if case .batteryLevel(let level) = value {
                broadcaster.yield(.batteryLevel(identity, level.percent))
                return
            }
            broadcaster.yield(
                .measurement(
                    SensorMeasurement(
                        sensor: identity, characteristic: characteristic, value: value, receivedAt: clock.now(),
                        bonded: bonded)))
        } catch {
            // Debug only: the event's consumer logs it, and hides a guest's bytes.
            logger.debug(
                "frame refused",
                metadata: [
                    "sensor": "\(identity)", "error": "\(error)",
                    "bytes": "\(bytes.map { String($0, radix: 16) }.joined(separator: " "))",
                ])
            broadcaster.yield(.decodingFailed(identity, error, bytes: bytes))
        }
    }
}
