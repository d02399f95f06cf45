import DBus
import GATT

/// Answers method calls on the peripheral's objects: a pure value holding the object tree and
/// the one caller it serves.
///
/// Nothing is trusted by default: only the current owner of `org.bluez` (bluetoothd) is served;
/// any other caller gets `AccessDenied`. Every size from outside is bounded: a write longer than
/// ``maximumWriteLength`` is refused unread, a read offset past the end is refused.
struct PeripheralServer: Sendable {
    /// Longest control-point write looked at (its only command is one byte).
    static let maximumWriteLength = 4
    /// Refused callers logged, each once: a flood of calls does not flood the log.
    static let maximumLoggedCallers = 64
    /// A notification's payload at the default ATT MTU (23 − 3): bluetoothd cuts anything longer
    /// to the link's MTU, which would split an RR interval.
    static let maximumNotificationBytes = 20

    /// A property to announce with `PropertiesChanged` on `org.bluez.GattCharacteristic1`.
    struct Change: Hashable, Sendable {
        let path: String
        let name: String
        let value: DBusValue

        /// The signal's arguments: interface, changed properties, nothing invalidated.
        var signalArguments: [DBusValue] {
            [
                .string(PeripheralObjectTree.characteristicInterface), .propertyMap([(name, value)]),
                .array(elementSignature: "s", []),
            ]
        }
    }

    /// The answer to one call and what it set off.
    struct Outcome: Sendable {
        var reply: DBusMethodReply
        var events: [PeripheralEvent] = []
        var changes: [Change] = []
        /// bluetoothd released the advertisement (`LEAdvertisement1.Release`).
        var released = false
        /// A refused caller seen for the first time, to log.
        var refusedCallerToLog: String?
    }

    private(set) var tree: PeripheralObjectTree
    /// The unique name of `org.bluez`'s owner, the only caller served; `nil` while nobody owns it.
    var trustedCaller: String?
    private(set) var refusedCalls = 0
    private(set) var refusedWrites = 0
    private var loggedCallers: Set<String> = []

    init(tree: PeripheralObjectTree) { self.tree = tree }

    /// Whether a central is subscribed to Heart Rate Measurement notifications.
    var isNotifying: Bool { tree.characteristic(.heartRateMeasurement)?.notifying ?? false }

    /// Answers `call`.
    mutating func answer(_ call: DBusMethodCall) -> Outcome {
        guard let trustedCaller, call.sender == trustedCaller else {
            refusedCalls += 1
            let first =
                loggedCallers.count < Self.maximumLoggedCallers && loggedCallers.insert(call.sender).inserted
            return Outcome(
                reply: .failure(
                    DBusError(
                        name: DBusError.accessDeniedName,
                        message: "only bluetoothd (the owner of org.bluez) may call hrbridge's peripheral")),
                refusedCallerToLog: first ? call.sender : nil)
        }
        let interfaces = tree.interfaces(at: call.path)
        guard !interfaces.isEmpty else {
            return Outcome(reply: .failure(DBusError(name: DBusError.unknownObjectName, message: "no such object")))
        }
        switch call.interface ?? Self.interface(of: call.member, among: interfaces) {
        case PeripheralObjectTree.propertiesInterface:
            return Outcome(reply: properties(call))
        case PeripheralObjectTree.objectManagerInterface
        where interfaces.contains(PeripheralObjectTree.objectManagerInterface):
            guard call.member == "GetManagedObjects" else { return Outcome(reply: Self.unknownMethod(call)) }
            guard call.arguments.isEmpty else { return Outcome(reply: Self.invalidArguments(call)) }
            return Outcome(reply: .success([tree.managedObjects]))
        case PeripheralObjectTree.characteristicInterface:
            guard let characteristic = tree.characteristic(at: call.path) else {
                return Outcome(reply: Self.unknownMethod(call))
            }
            return answer(call, on: characteristic)
        case PeripheralObjectTree.advertisementInterface where call.path == tree.advertisementPath:
            guard call.member == "Release" else { return Outcome(reply: Self.unknownMethod(call)) }
            return Outcome(reply: .success([]), released: true)
        default:
            return Outcome(reply: Self.unknownMethod(call))
        }
    }

    /// bluetoothd went away: nobody is subscribed any more.
    mutating func forgetSubscriptions() -> [PeripheralEvent] {
        let wasNotifying = isNotifying
        for kind in PeripheralCharacteristic.allCases { _ = tree.setNotifying(false, of: kind) }
        return wasNotifying ? [.notifying(false)] : []
    }

    /// Sets the battery level (`nil`, or above 100 %: unknown, and reads are refused); the change
    /// to announce when a central is subscribed to it.
    mutating func setBatteryLevel(_ percent: UInt8?) -> Change? {
        let value = percent.flatMap { $0 <= 100 ? [$0] : nil }
        guard tree.setValue(value, of: .batteryLevel), let value,
            let characteristic = tree.characteristic(.batteryLevel), characteristic.notifying
        else { return nil }
        return Change(path: characteristic.path, name: "Value", value: .bytes(value))
    }

    /// The notification for `measurement` when a central is subscribed, and how many RR
    /// intervals were left out to fit; `nil` when nobody is.
    func notification(for measurement: HeartRateMeasurement) -> (change: Change, trimmed: Int)? {
        guard let characteristic = tree.characteristic(.heartRateMeasurement), characteristic.notifying else {
            return nil
        }
        let (bytes, trimmed) = Self.frame(for: measurement)
        return (Change(path: characteristic.path, name: "Value", value: .bytes(bytes)), trimmed)
    }

    /// The 0x2A37 bytes for `measurement`, at most ``maximumNotificationBytes``: the oldest RR
    /// intervals are left out when they do not all fit (none is ever sent later), and a heart
    /// rate above 255 is always sent as uint16.
    static func frame(for measurement: HeartRateMeasurement) -> (bytes: [UInt8], trimmed: Int) {
        var frame = measurement
        if frame.heartRate > UInt16(UInt8.max) { frame.valueFormat = .uint16 }
        let fixed = 1 + (frame.valueFormat == .uint16 ? 2 : 1) + (frame.energyExpended == nil ? 0 : 2)
        let room = (maximumNotificationBytes - fixed) / 2
        let trimmed = max(0, frame.rrIntervals.count - room)
        frame.rrIntervals.removeFirst(trimmed)
        return (frame.encoded(), trimmed)
    }

    // MARK: Calls

    private mutating func answer(_ call: DBusMethodCall, on characteristic: PeripheralObjectTree.Characteristic)
        -> Outcome
    {
        let kind = characteristic.kind
        switch call.member {
        case "ReadValue":
            guard call.arguments.count == 1, let options = call.arguments[0].stringDictionary,
                let offset = Self.offset(in: options)
            else { return Outcome(reply: Self.invalidArguments(call)) }
            guard kind.isReadable else { return Outcome(reply: .failure(Self.notPermitted("not readable"))) }
            guard let value = characteristic.value else {
                return Outcome(reply: .failure(Self.notPermitted("no value known")))
            }
            guard offset <= value.count else {
                return Outcome(
                    reply: .failure(DBusError(name: "org.bluez.Error.InvalidOffset", message: "offset past the end")))
            }
            return Outcome(reply: .success([.bytes(Array(value[offset...]))]))
        case "WriteValue":
            guard call.arguments.count == 2, let bytes = call.arguments[0].bytes,
                let options = call.arguments[1].stringDictionary, let offset = Self.offset(in: options)
            else { return Outcome(reply: Self.invalidArguments(call)) }
            guard kind.isWritable else { return Outcome(reply: .failure(Self.notPermitted("not writable"))) }
            guard offset == 0, bytes == HeartRateControlPoint.resetEnergyExpended.encoded() else {
                refusedWrites += 1
                // org.bluez.Error.Failed is ATT error 0x80 in bluetoothd's gatt-database.c; newer
                // versions read the code from the message, so it says 0x80 too.
                return Outcome(
                    reply: .failure(DBusError(name: "org.bluez.Error.Failed", message: "0x80")),
                    events: [.refusedWrite(bytes: Array(bytes.prefix(Self.maximumWriteLength)))])
            }
            return Outcome(reply: .success([]), events: [.energyResetRequested])
        case "StartNotify", "StopNotify":
            guard call.arguments.isEmpty else { return Outcome(reply: Self.invalidArguments(call)) }
            guard kind.notifies else {
                return Outcome(reply: .failure(DBusError(name: "org.bluez.Error.NotSupported", message: "no notify")))
            }
            let on = call.member == "StartNotify"
            guard tree.setNotifying(on, of: kind) else { return Outcome(reply: .success([])) }
            return Outcome(
                reply: .success([]), events: kind == .heartRateMeasurement ? [.notifying(on)] : [],
                changes: [Change(path: characteristic.path, name: "Notifying", value: .boolean(on))])
        case "Confirm":
            // Indication confirmations (BlueZoo sends one after every notification too): nothing to do.
            return Outcome(reply: .success([]))
        case "AcquireNotify", "AcquireWrite":
            return Outcome(reply: .failure(DBusError(name: "org.bluez.Error.NotSupported", message: "not offered")))
        default:
            return Outcome(reply: Self.unknownMethod(call))
        }
    }

    private func properties(_ call: DBusMethodCall) -> DBusMethodReply {
        switch call.member {
        case "Get":
            guard call.arguments.count == 2, let interface = call.arguments[0].string,
                let name = call.arguments[1].string
            else { return Self.invalidArguments(call) }
            guard let property = tree.properties(at: call.path, interface: interface)?.first(where: { $0.name == name })
            else {
                return .failure(
                    DBusError(name: DBusError.invalidArgsName, message: "no property \(name.prefix(64))"))
            }
            return .success([.variant(property.value)])
        case "GetAll":
            guard call.arguments.count == 1, let interface = call.arguments[0].string else {
                return Self.invalidArguments(call)
            }
            guard let properties = tree.properties(at: call.path, interface: interface) else {
                return .failure(
                    DBusError(name: DBusError.invalidArgsName, message: "no interface \(interface.prefix(64))"))
            }
            return .success([PeripheralObjectTree.propertyMap(properties)])
        case "Set":
            return .failure(
                DBusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "properties are read-only"))
        default:
            return Self.unknownMethod(call)
        }
    }

    /// The interface a call names no interface for belongs to.
    private static func interface(of member: String, among interfaces: [String]) -> String {
        switch member {
        case "Get", "GetAll", "Set": PeripheralObjectTree.propertiesInterface
        default: interfaces.first ?? ""
        }
    }

    /// The `offset` option (0 when absent); `nil` when it is not a non-negative integer.
    private static func offset(in options: [String: DBusValue]) -> Int? {
        guard let value = options["offset"] else { return 0 }
        guard let offset = value.integer, offset >= 0 else { return nil }
        return offset
    }

    private static func notPermitted(_ message: String) -> DBusError {
        DBusError(name: "org.bluez.Error.NotPermitted", message: message)
    }

    private static func unknownMethod(_ call: DBusMethodCall) -> DBusMethodReply {
        .failure(DBusError(name: DBusError.unknownMethodName, message: "no method \(call.member.prefix(64))"))
    }

    private static func invalidArguments(_ call: DBusMethodCall) -> DBusMethodReply {
        .failure(
            DBusError(name: DBusError.invalidArgsName, message: "unexpected arguments to \(call.member.prefix(64))"))
    }
}
