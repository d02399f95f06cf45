import BlueZ
import GATT
import Sensors

/// Which straps a command uses: the named ones, else every known (paired or trusted) strap with
/// the Heart Rate service, else the first one discovered within 30 s.
enum StrapSelection {
    /// The straps chosen, and, when a search was needed and could not start, why.
    struct Choice {
        var straps: [SensorIdentity]
        /// BlueZ refused the search (an adapter that will not scan): no strap could be found.
        var discoveryFailure: SensorAdapterError?

        /// What the user is told when no strap was chosen: a search that never ran is not a strap
        /// out of range.
        var nothingFound: String {
            guard let discoveryFailure else {
                return "hrbridge: no heart-rate strap found; is it worn and advertising?"
            }
            return "hrbridge: no heart-rate strap found: discovery did not start (\(discoveryFailure))"
        }
    }

    static func choose(adapter: BlueZAdapter, addresses: [String], searchFor seconds: Int = 30) async -> Choice {
        let known = await adapter.knownDevices()
        // As BlueZ knows it (its adapter, `hci0`, and its name): events and samples carry that
        // identity, not the pool's name, and a strap is matched to its figures by it.
        func identity(_ address: String) -> SensorIdentity {
            known.first { $0.identity.address == address }?.identity
                ?? SensorIdentity(adapter: adapter.name, address: address)
        }
        var chosen = addresses.map { identity($0.uppercased()) }
        if chosen.isEmpty {
            chosen = known.filter { $0.services.contains(.heartRate) && ($0.paired || $0.trusted) }.map(\.identity)
        }
        // A strap is the same strap through whichever adapter hears it: compare addresses.
        let knownAddresses = Set(known.map(\.identity.address))
        guard chosen.isEmpty || !chosen.allSatisfy({ knownAddresses.contains($0.address) }) else {
            return Choice(straps: chosen)
        }
        let events = adapter.events()
        do {
            try await adapter.startDiscovery(services: [.heartRate])
        } catch {
            // Nothing new can turn up: waiting out the search would only hide why.
            return Choice(straps: chosen.filter { knownAddresses.contains($0.address) }, discoveryFailure: error)
        }
        let wanted = Set(chosen.map(\.address))
        let selected = chosen
        let found =
            await firstAnswer(within: Double(seconds)) { () -> [SensorIdentity]? in
                var missing = wanted.subtracting(knownAddresses)
                var discovered: [String: SensorIdentity] = [:]
                for await event in events {
                    guard case .discovered(let sensor) = event, sensor.services.contains(.heartRate) else { continue }
                    if wanted.isEmpty { return [sensor.identity] }
                    missing.remove(sensor.identity.address)
                    discovered[sensor.identity.address] = sensor.identity
                    if missing.isEmpty { return selected.map { discovered[$0.address] ?? $0 } }
                }
                return nil
            } ?? selected.filter { knownAddresses.contains($0.address) }
        try? await adapter.stopDiscovery()
        return Choice(straps: found)
    }

    /// Searches for the sensor at `address` (any service) for up to `seconds`; whether it turned
    /// up. Throws at once when BlueZ refuses the search: waiting then would only hide why.
    static func find(_ address: String, on adapter: BlueZAdapter, within seconds: Double)
        async throws(SensorAdapterError) -> Bool
    {
        let events = adapter.events()
        try await adapter.startDiscovery(services: [])
        let found =
            await firstAnswer(within: seconds) { () -> Bool? in
                for await event in events {
                    if case .discovered(let discovered) = event, discovered.identity.address == address { return true }
                }
                return nil
            } ?? false
        try? await adapter.stopDiscovery()
        return found
    }

    /// What `search` answers, unless `seconds` pass first (or it ends without an answer): nil.
    private static func firstAnswer<Answer: Sendable>(
        within seconds: Double, _ search: @escaping @Sendable () async -> Answer?
    ) async -> Answer? {
        await withTaskGroup(of: Answer?.self) { group in
            group.addTask { await search() }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
