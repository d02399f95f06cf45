public import BlueZ
public import BridgeOut
import Foundation
public import MQTT
public import Sensors
import Wire
public import Workouts

/// What `hrbridged` runs with: read from `/etc/hrbridge/config.toml` (or `--config`) by
/// ``ConfigurationLoader``; every field has a default, so an empty file is a valid configuration.
public struct BridgeConfiguration: Sendable {
    /// Where sensor data comes from.
    public enum AdapterKind: Sendable, Equatable {
        /// The simulator: a scenario file (nil: the built-in one), a seed, a time acceleration.
        case mock(scenario: String?, seed: UInt64?, speed: Double)
        /// BlueZ on the system bus, through `adapters` (nil: every adapter, including ones plugged in later).
        case bluez(adapters: [String]? = nil, repairOnKeyLoss: Bool = false)
        /// Other gateways' straps, from the measurements they publish on an MQTT broker (a hub).
        case mqtt(RemoteAdapterSettings)
    }

    /// `[adapter] kind = "mqtt"`: the broker a hub follows gateways through.
    public struct RemoteAdapterSettings: Sendable, Equatable {
        public var broker: MQTTBrokerURL
        /// Only these gateways' straps (nil: every gateway's).
        public var nodes: [String]?
        public var username: String?
        /// A file holding the password (one line; not readable by every user).
        public var passwordFile: String?
        public var tlsCA: String?
        /// Seconds without a measurement before a strap counts as gone.
        public var expire: Double = 10
        /// The hub's MQTT client id (nil: `hrbridge-hub-<host>`): pin it at the broker, since a
        /// persistent session under a guessable id can be taken over by whoever connects with it.
        public var clientID: String?
        /// Seconds a gateway's frame may be dated ahead of the hub's clock (`max_clock_skew`).
        public var maximumClockSkew: Double = 5
        /// The gateways' key files, by node (`gateway_keys`: a directory of `<node>.key`); when
        /// there are any, only signed measurements and backfill are read.
        public var gatewayKeys: [String: String] = [:]
        /// The next key files of gateways being given a new key, by node (`<node>.next.key` beside
        /// `<node>.key`): both are read until the gateway signs with the next one.
        public var gatewayNextKeys: [String: String] = [:]
        /// Backfill frames a gateway may send per minute (`backfill_budget`).
        public var backfillBudget = 30_000

        public init(broker: MQTTBrokerURL) { self.broker = broker }
    }

    /// What a bearer token may do.
    public enum Role: String, Sendable, Comparable, CaseIterable {
        /// State, lists and live streams.
        case read
        /// Everything `read` may, plus starting and ending sessions, connecting and pairing sensors.
        case control

        /// `read` ranks below `control`.
        public static func < (lhs: Role, rhs: Role) -> Bool { lhs == .read && rhs == .control }
    }

    /// A bearer token for the TCP listener.
    public struct Token: Sendable, Equatable {
        /// The token text.
        public var value: String
        /// What the token may do.
        public var role: Role
        public init(value: String, role: Role) {
            self.value = value
            self.role = role
        }
    }

    /// An athlete: the profile sessions use (zones, energy), and optional custom heart-rate zones.
    public struct Athlete: Sendable {
        /// The athlete's profile.
        public var profile: UserProfile
        /// Custom heart-rate zones, overriding the profile's.
        public var zones: ZoneConfiguration?
        public init(profile: UserProfile, zones: ZoneConfiguration? = nil) {
            self.profile = profile
            self.zones = zones
        }
    }

    /// A sensor the bridge keeps connected, and whose athlete a session on it records.
    public struct KnownSensor: Sendable, Equatable {
        /// The Bluetooth address, upper case.
        public var address: String
        /// The athlete identifier.
        public var athlete: String?
        /// A display name.
        public var name: String?
        /// The only adapter the sensor may use (`hci1`), if bound.
        public var adapter: String?
        /// Who gets a freed link slot first (higher first; a strap in a running session gets +100).
        public var priority = 0
        /// The strap's address type (`address_type`): a device repeating its address with another
        /// type is not taken for it (nil: not checked).
        public var addressType: AddressType?
        /// The raw signals to stream whenever the strap is linked (`waveforms`, with `acc_rate` and
        /// `acc_range`): for the live API's `ecg` and `acc` messages and the store.
        public var waveforms: [WaveformRequest] = []
        public init(address: String, athlete: String? = nil, name: String? = nil, adapter: String? = nil) {
            self.address = address
            self.athlete = athlete
            self.name = name
            self.adapter = adapter
        }
    }

    /// The adapter name.
    public var adapter: AdapterKind = .mock(scenario: nil, seed: nil, speed: 1)
    /// Whether a wanted strap without a link is followed through the heart rate it broadcasts
    /// (`[adapter] follow_advertisements`; BlueZ and the simulator). Those readings are marked
    /// `via: advertisement` wherever they go.
    public var followsAdvertisements = true
    /// The store file; nil: `$STATE_DIRECTORY/store.sqlite` under systemd, else the user's default.
    public var storePath: String?
    /// A PostgreSQL store (`postgresql://…`) instead of the SQLite file; hubs share one.
    public var storeURL: String?
    /// The file holding the PostgreSQL password.
    public var storePasswordFile: String?
    /// The API's Unix socket; nil: `$RUNTIME_DIRECTORY/api.sock` under systemd, else `/run/hrbridge/api.sock`.
    public var socketPath: String?
    /// The socket's permission bits.
    public var socketMode: Int = 0o660
    /// The optional TCP listener on 127.0.0.1; every request on it needs a token.
    public var tcpPort: Int?
    /// The most connections each listener serves at once; beyond it, requests get 503.
    public var maxConnections = 256
    /// Seconds before a connection that sends nothing (or never finishes its request head) is closed.
    public var idleTimeout = 30
    /// Bearer tokens for the TCP listener.
    public var tokens: [Token] = []
    /// Athletes and their profiles.
    public var athletes: [Athlete] = []
    public var sensors: [KnownSensor] = []
    /// The MQTT broker to publish to (nil: no MQTT).
    public var mqtt: MQTTSettings?
    /// The class session and its automatic sign-in.
    public var classSettings = ClassSettings()
    /// `[peripheral]`: hrbridge as a Bluetooth heart-rate sensor for apps (nil: off).
    public var peripheral: PeripheralSettings?
    /// `[osc]`: heart rate as OSC parameters for VR avatars (nil: off).
    public var osc: OSCSettings?
    /// `[lsl]`: Lab Streaming Layer outlets for labs (nil: off).
    public var lsl: LSLSettings?

    /// The default configuration: the simulator, default paths, no TCP listener.
    public init() {}

    /// The socket path in force.
    public var effectiveSocketPath: String {
        socketPath ?? DaemonSocket.defaultPath
    }

    /// The athlete a sensor belongs to, when the configuration says.
    public func athlete(forSensor address: String) -> Athlete? {
        guard let id = sensors.first(where: { $0.address == address.uppercased() })?.athlete else { return nil }
        return athletes.first { $0.profile.id == id }
    }

    /// The athlete with this identifier.
    public func athlete(_ id: String) -> Athlete? { athletes.first { $0.profile.id == id } }
}
