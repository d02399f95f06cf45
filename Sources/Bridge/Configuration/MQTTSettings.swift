import Foundation
public import MQTT

/// `[mqtt]`: publish sensors and sessions to a broker, announce them to Home Assistant, and
/// (when allowed) take session commands from it.
public struct MQTTSettings: Sendable, Equatable {
    /// The broker.
    public var broker: MQTTBrokerURL
    /// This bridge's name in topics (`hrbridge/<node>/…`): letters, digits, `-` and `_`.
    public var node: String
    public var username: String?
    /// A file holding the password (one line; not readable by every user).
    public var passwordFile: String?
    /// The CA certificate that signs the broker's (TLS; default: the system's CAs).
    public var tlsCA: String?
    /// A client certificate and key, for brokers that ask for one.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// Seconds between keepalive pings.
    public var keepalive = 30
    /// Whether Home Assistant discovery configs are published (by default, unless this gateway
    /// publishes measurements for a hub, which announces the straps itself).
    public var discovery = true
    /// Home Assistant's discovery prefix.
    public var discoveryPrefix = "homeassistant"
    /// Where Home Assistant announces it started (its birth message, `online`): the configs go out
    /// again. Home Assistant's own setting, apart from the discovery prefix.
    public var birthTopic = "homeassistant/status"
    /// Seconds between heart-rate updates of a sensor's state topic (0: every frame).
    public var stateInterval = 1.0
    /// Seconds after which Home Assistant shows a value that was not updated as unavailable.
    public var expireAfter = 30
    /// Whether session commands (`hrbridge/<node>/cmd/…`) are obeyed; the broker's ACL decides who may send them.
    public var commands = false
    /// Whether straps recording a guest session publish live values (never retained, never their session).
    public var publishGuests = false
    /// The most live values that wait while the broker is away.
    public var queueLimit = 1000
    /// Whether every decoded frame goes out on `…/sensor/<id>/measurement` (QoS 0, a compact
    /// envelope with a sequence number) for hubs that follow this gateway.
    public var publishMeasurements = false
    /// Where a gateway journals the frames it publishes, to send them again (`…/backfill`) after
    /// the broker was away; nil: `$STATE_DIRECTORY/measurements.journal` under systemd, else
    /// `$XDG_STATE_HOME/hrbridge/measurements-<node>.journal`.
    public var journalPath: String?
    /// The journal's size on disk at most, in MiB.
    public var journalMegabytes = 64
    /// Backfill frames a second at most once a burst of 50 seconds' worth is spent: under a hub's
    /// default budget (30,000 a minute), so a long outage's replay is never refused there.
    public var backfillRate = 400
    /// This gateway's key (`key_file`): its measurements, backfill, status and availability carry
    /// an HMAC-SHA256 tag a hub holding the same key checks, and its boot.
    public var keyFile: String?

    /// The journal file this gateway uses.
    public var effectiveJournalPath: String {
        if let journalPath { return journalPath }
        let environment = ProcessInfo.processInfo.environment
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !state.isEmpty {
            return "\(state)/measurements.journal"
        }
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        return "\(base)/hrbridge/measurements-\(node).journal"
    }

    /// Where a gateway with a key keeps its last boot (`GatewayBoot`), beside the journal:
    /// `gateway-<node>.boot`.
    public var effectiveBootPath: String {
        URL(fileURLWithPath: effectiveJournalPath).deletingLastPathComponent().appendingPathComponent(
            "gateway-\(node).boot"
        ).path
    }

    public init(broker: MQTTBrokerURL, node: String) {
        self.broker = broker
        self.node = node
    }

    /// A node name from a host name: what topics and Home Assistant ids allow.
    public static func nodeName(fromHost host: String) -> String {
        let cleaned = String(
            host.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" })
        return cleaned.isEmpty ? "hrbridge" : String(cleaned.prefix(64))
    }
}
