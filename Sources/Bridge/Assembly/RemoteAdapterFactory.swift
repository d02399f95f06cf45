import Foundation
import Logging
import MQTT
import RemoteSensors
import Sensors
import Threads
import WorkoutStore

/// A hub: its straps are other gateways', heard over MQTT.
struct RemoteAdapterFactory: AdapterFactory {
    let settings: BridgeConfiguration.RemoteAdapterSettings

    func make(
        _ configuration: BridgeConfiguration, store: WorkoutStore, logger: Logger
    ) async throws(DaemonError) -> AdapterAssembly {
        let clock = SystemWallClock()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hub"
        // A persistent session under a stable id: backfill a gateway sends while the hub is
        // away (the broker restarted and the gateway came back first) waits at the broker.
        var options = MQTTClient.Options(
            broker: settings.broker, clientID: settings.clientID ?? "hrbridge-hub-\(host.prefix(40))")
        options.cleanSession = false
        options.username = settings.username
        if let path = settings.passwordFile {
            guard let password = PasswordFile.read(path) else {
                throw DaemonError.adapter("\(path): cannot be read as a password file")
            }
            options.password = password
        }
        options.tlsCAFile = settings.tlsCA
        var adapterSettings = MQTTSensorAdapter.Settings(client: options, nodes: settings.nodes.map(Set.init))
        adapterSettings.expire = settings.expire
        adapterSettings.maximumSkew = settings.maximumClockSkew
        adapterSettings.backfillBudget = settings.backfillBudget
        adapterSettings.owners = Dictionary(
            configuration.sensors.compactMap { sensor in sensor.adapter.map { (sensor.address, $0) } },
            uniquingKeysWith: { first, _ in first })
        for (node, path) in settings.gatewayKeys {
            guard let signer = EnvelopeSigner(keyFile: path) else {
                throw DaemonError.adapter("\(path): not a gateway key (at least 32 bytes)")
            }
            adapterSettings.keys[node] = signer
        }
        // Which gateways an earlier run heard sign with their next key: only that key is read.
        let recordPath = Self.keySwitchRecordPath
        var recorded = KeySwitchRecord()
        do {
            recorded = try KeySwitchRecord.read(from: recordPath)
        } catch {
            logger.warning(
                "the record of gateways that switched keys cannot be read: both keys read until each gateway signs with its next one",
                metadata: ["path": "\(recordPath)", "error": "\(error)"])
        }
        for (node, path) in settings.gatewayNextKeys {
            guard let signer = EnvelopeSigner(keyFile: path) else {
                throw DaemonError.adapter("\(path): not a gateway key (at least 32 bytes)")
            }
            adapterSettings.nextKeys[node] = signer
            if recorded.fingerprints[node] == signer.fingerprint {
                adapterSettings.switchedKeys.insert(node)
                logger.notice(
                    "gateway key being rotated: the gateway signs with its next key, its old one is refused (rename <node>.next.key to <node>.key)",
                    metadata: ["node": "\(node)", "next": "\(path)"])
            } else {
                logger.notice(
                    "gateway key being rotated: both keys read until the gateway signs with the next one",
                    metadata: ["node": "\(node)", "next": "\(path)"])
            }
        }
        let keep: @Sendable (KeySwitchRecord) async -> Void = { record in
            do {
                try await DetachedThread.run(named: "hrbridge.keys") { Result { try record.write(to: recordPath) } }
                    .get()
            } catch {
                logger.warning(
                    "the gateways that switched keys cannot be kept: a restarted hub reads their old keys again until they next sign",
                    metadata: ["path": "\(recordPath)", "error": "\(error)"])
            }
        }
        // Lines of rotations abandoned or finished since go: the same next key put back later
        // starts with both keys read again.
        let current = recorded.kept(nextKeys: adapterSettings.nextKeys.mapValues(\.fingerprint))
        if current != recorded { await keep(current) }
        if !settings.gatewayNextKeys.isEmpty { adapterSettings.recordKeySwitches = keep }
        let adapter: MQTTSensorAdapter
        do {
            adapter = try MQTTSensorAdapter(settings: adapterSettings, clock: clock, logger: logger)
        } catch {
            throw DaemonError.adapter("\(error)")
        }
        var assembly = AdapterAssembly(adapter: adapter, clock: clock, offersKnown: false)
        // Connected only once the sensor manager listens: a strap's first measurement makes it
        // ready, and an event nobody heard would leave it shown as merely seen.
        assembly.start = { () async throws(DaemonError) in
            do {
                try await adapter.start()
            } catch {
                throw DaemonError.adapter("\(error)")
            }
        }
        assembly.stop = { await adapter.shutdown() }
        return assembly
    }

    /// Where a hub keeps which gateways switched to their next key: in its state directory
    /// (systemd's `StateDirectory=`, else the user's), `gateway-key-switches`.
    static var keySwitchRecordPath: String {
        let environment = ProcessInfo.processInfo.environment
        let state =
            environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? (environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state") + "/hrbridge"
        return state + "/gateway-key-switches"
    }
}
