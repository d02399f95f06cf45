import BusHarness
import Foundation

/// A third-party OSC receiver (PyPI python-osc, `Tests/Fixtures/osc/server.py`) on loopback:
/// what VRChat would read, decoded by someone else's code.
final class PythonOSCServer: Sendable {
    /// One message it received.
    struct Received: Sendable, CustomStringConvertible {
        var address: String
        var tags: String
        var values: [OSCValue]
        /// Its receipt time in seconds on the server's monotonic clock.
        var received: Double

        var description: String { "\(address) \(tags) \(values) @\(received)" }
    }

    /// A value as python-osc decoded it.
    enum OSCValue: Sendable, Equatable, CustomStringConvertible {
        case int(Int)
        case float(Double)
        case string(String)
        case bool(Bool)

        var description: String {
            switch self {
            case .int(let value): "\(value)"
            case .float(let value): "\(value)"
            case .string(let value): "\"\(value)\""
            case .bool(let value): "\(value)"
            }
        }
    }

    private let process: Spawned
    /// The UDP port it listens on (127.0.0.1).
    let port: UInt16

    /// Starts it and waits for its ready line (its port).
    init() async throws {
        let script = packageRoot.appendingPathComponent("Tests/Fixtures/osc/server.py").path
        process = try await Spawned.startPeer(venvPython, [script], label: "python-osc server") { peer in
            peer.output.contains { $0.contains("\"ready\"") }
        }
        guard let line = process.output.first(where: { $0.contains("\"ready\"") }),
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = object["port"] as? Int
        else { throw HarnessError("python-osc server printed no port: \(process.report)") }
        self.port = UInt16(port)
    }

    /// Every message so far, in arrival order.
    var messages: [Received] {
        process.output.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let address = object["address"] as? String, let tags = object["tags"] as? String,
                let values = object["values"] as? [Any], let received = object["received"] as? Double
            else { return nil }
            let tagList = Array(tags.dropFirst())
            let decoded = values.enumerated().map { index, value -> OSCValue in
                switch index < tagList.count ? tagList[index] : "?" {
                case "i": .int((value as? NSNumber)?.intValue ?? Int.min)
                case "f": .float((value as? NSNumber)?.doubleValue ?? .nan)
                case "T", "F": .bool((value as? NSNumber)?.boolValue ?? false)
                default: .string(value as? String ?? "\(value)")
                }
            }
            return Received(address: address, tags: tags, values: decoded, received: received)
        }
    }

    /// Datagrams it did not take for OSC, as hex.
    var refused: [String] {
        process.output.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["refused"] as? String
        }
    }

    /// Waits until `condition` holds for the messages so far.
    func waitUntil(_ what: String, _ condition: @escaping ([Received]) -> Bool) async throws {
        try await eventually(what) { condition(messages) }
    }

    /// Its last lines, for failure messages.
    var report: String { process.report }

    /// Stops it by PID.
    func stop() { process.stop() }
}
