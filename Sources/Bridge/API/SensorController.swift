import Foundation
import Hummingbird
import Sensors
import Wire

/// `/v1/sensors`: the straps the bridge knows, and connect, disconnect, pair and forget.
struct SensorController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("sensors") { _, _ in try APIRouter.json(["sensors": await core.sensors.list()]) }
        v1.get("sensors/:address") { _, context in
            let address = try Self.address(context)
            guard let status = await core.sensors.status(address) else {
                throw APIError(.notFound, "unknown_sensor", "no sensor \(address)")
            }
            return try APIRouter.json(status)
        }
        for action in ["connect", "disconnect", "pair"] {
            v1.post("sensors/:address/\(action)") { _, context in
                try context.require(.control)
                let address = try Self.address(context)
                // Only sensors that are configured or were seen advertising a fitness service: the
                // control role is not a general Bluetooth admin, and nothing is started for others.
                guard await core.sensors.status(address) != nil else {
                    throw APIError(
                        .notFound, "unknown_sensor", "no fitness sensor \(address) is configured or in range")
                }
                do {
                    switch action {
                    case "connect": try await core.sensors.connect(address)
                    case "disconnect": try await core.sensors.disconnect(address)
                    default: try await core.sensors.pair(address)
                    }
                } catch {
                    throw Self.adapterError(error)
                }
                let status =
                    await core.sensors.status(address)
                    ?? SensorStatus(address: address, adapter: core.sensors.adapter.name)
                return try APIRouter.json(status, status: .accepted)
            }
        }
        v1.delete("sensors/:address") { _, context in
            try context.require(.control)
            let address = try Self.address(context)
            guard await core.sensors.status(address) != nil else {
                throw APIError(.notFound, "unknown_sensor", "no fitness sensor \(address) is configured or in range")
            }
            do {
                // The session manager checks and holds the strap in one step: no session starts on it meanwhile.
                try await core.sessions.forgetSensor(address)
            } catch let error as SessionError {
                throw APIError(error)
            } catch {
                throw Self.adapterError(error)
            }
            return Response(status: .noContent)
        }
    }

    static func address(_ context: BridgeRequestContext) throws -> String {
        let raw = try context.parameters.require("address")
        let address = (raw.removingPercentEncoding ?? raw).uppercased()
        guard BluetoothAddress.isValid(address) else {
            throw APIError.badRequest(
                "\(APIError.shown(address)) is not a Bluetooth address such as C0:FF:EE:00:00:01")
        }
        return address
    }

    static func adapterError(_ error: any Error) -> APIError {
        if let error = error as? SensorAdapterError {
            switch error {
            case .unknownSensor: return APIError(.notFound, "unknown_sensor", error.description)
            case .notConnected: return APIError(.conflict, "not_connected", error.description)
            case .adapterUnavailable: return APIError(.conflict, "adapter_unavailable", error.description)
            default: return APIError(.conflict, "sensor_failed", error.description)
            }
        }
        return APIError(.conflict, "sensor_failed", "\(error)")
    }
}
