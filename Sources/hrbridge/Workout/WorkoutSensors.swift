import ArgumentParser
import BlueZ
import DBus
import Foundation
import GATT
import SensorSimulator
import Sensors

/// The adapter a workout reads from, the sensors chosen on it, and how to close it at the end.
struct WorkoutSensors: Sendable {
    let adapter: any SensorAdapter
    let sensors: [SensorIdentity]
    let finish: @Sendable (Date) async -> Void

    /// The simulator: every virtual strap, or those named with --sensor.
    static func mock(_ mock: MockSensorAdapter, addresses: [String]) throws -> WorkoutSensors {
        let wanted = Set(addresses.map { $0.uppercased() })
        let chosen = mock.sensors.filter { wanted.isEmpty || wanted.contains($0.address) }
        guard !chosen.isEmpty else {
            StandardError.write("hrbridge: no virtual strap matches --sensor \(addresses.joined(separator: ", "))")
            throw ExitCode(69)
        }
        return WorkoutSensors(adapter: mock, sensors: chosen) { stop in await mock.finish(at: stop) }
    }

    /// Real straps through BlueZ: the named ones, else known heart-rate straps, else the first found.
    static func bluez(settings: BluetoothSettings, addresses: [String], clock: any WallClock) async throws
        -> WorkoutSensors
    {
        let (connection, adapter) = try await settings.open(clock: clock)
        let choice = await StrapSelection.choose(adapter: adapter, addresses: addresses)
        let chosen = choice.straps
        guard !chosen.isEmpty else {
            StandardError.write(choice.nothingFound)
            await adapter.shutdown()
            await connection.close()
            throw ExitCode(69)
        }
        let sensors = chosen
        return WorkoutSensors(adapter: adapter, sensors: sensors) { _ in
            for sensor in sensors { try? await adapter.disconnect(sensor) }
            await adapter.shutdown()
            await connection.close()
        }
    }
}
