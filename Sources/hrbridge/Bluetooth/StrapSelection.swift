import BlueZ
import GATT
import Sensors

/// Which straps a command uses: the named ones, else every known (paired or trusted) strap with
/// the Heart Rate service, else the first one discovered within 30 s.
enum StrapSelection {
    static func choose(adapter: BlueZAdapter, addresses: [String]) async -> [SensorIdentity] {
        var chosen = addresses.map { SensorIdentity(adapter: adapter.name, address: $0.uppercased()) }
        let known = await adapter.knownDevices()
        if chosen.isEmpty {
            chosen = known.filter { $0.services.contains(.heartRate) && ($0.paired || $0.trusted) }.map(\.identity)
        }
        // A strap is the same strap through whichever adapter hears it: compare addresses.
        let knownAddresses = Set(known.map(\.identity.address))
        guard chosen.isEmpty || !chosen.allSatisfy({ knownAddresses.contains($0.address) }) else { return chosen }
        let events = adapter.events()
        try? await adapter.startDiscovery(services: [.heartRate])
        let wanted = Set(chosen.map(\.address))
        let selected = chosen
        let found: [SensorIdentity] = await withTaskGroup(of: [SensorIdentity]?.self) { group in
            group.addTask {
                var missing = wanted.subtracting(knownAddresses)
                for await event in events {
                    guard case .discovered(let sensor) = event, sensor.services.contains(.heartRate) else { continue }
                    if wanted.isEmpty { return [sensor.identity] }
                    missing.remove(sensor.identity.address)
                    if missing.isEmpty { return selected }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            return result ?? selected.filter { knownAddresses.contains($0.address) }
        }
        try? await adapter.stopDiscovery()
        return found
    }
}
