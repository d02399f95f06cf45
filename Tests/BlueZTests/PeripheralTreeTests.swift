import GATT
import Testing

@testable import BlueZ
@testable import DBus

/// The peripheral's pure parts: the object tree, the advertised name, call answering and the
/// registration machine. No bus.
@Suite("Peripheral: object tree, advertised name, calls, registration")
struct PeripheralTreeTests {
    static let root = "/org/hrbridge/peripheral/hci1"
    static let bluetoothd = ":1.7"

    static func configuration(controlPoint: Bool) -> PeripheralConfiguration {
        PeripheralConfiguration(adapter: "hci1", localName: "Polar H10 1234ABCD", energyControlPoint: controlPoint)
    }

    /// Every object, interface and property with the control point published.
    static let snapshotWithControlPoint = """
        /org/hrbridge/peripheral/hci1 org.freedesktop.DBus.ObjectManager
        /org/hrbridge/peripheral/hci1/advertisement0 org.bluez.LEAdvertisement1
          Type = "peripheral"
          ServiceUUIDs = ["180D"]
          LocalName = "Polar H10 1234ABCD"
          Appearance = 833
        /org/hrbridge/peripheral/hci1/service0 org.bluez.GattService1
          UUID = "0000180d-0000-1000-8000-00805f9b34fb"
          Primary = true
        /org/hrbridge/peripheral/hci1/service0/char0 org.bluez.GattCharacteristic1
          UUID = "00002a37-0000-1000-8000-00805f9b34fb"
          Service = /org/hrbridge/peripheral/hci1/service0
          Flags = ["notify"]
          Notifying = false
        /org/hrbridge/peripheral/hci1/service0/char1 org.bluez.GattCharacteristic1
          UUID = "00002a38-0000-1000-8000-00805f9b34fb"
          Service = /org/hrbridge/peripheral/hci1/service0
          Flags = ["read"]
          Value = [1]
        /org/hrbridge/peripheral/hci1/service0/char2 org.bluez.GattCharacteristic1
          UUID = "00002a39-0000-1000-8000-00805f9b34fb"
          Service = /org/hrbridge/peripheral/hci1/service0
          Flags = ["write"]
        /org/hrbridge/peripheral/hci1/service1 org.bluez.GattService1
          UUID = "0000180f-0000-1000-8000-00805f9b34fb"
          Primary = true
        /org/hrbridge/peripheral/hci1/service1/char0 org.bluez.GattCharacteristic1
          UUID = "00002a19-0000-1000-8000-00805f9b34fb"
          Service = /org/hrbridge/peripheral/hci1/service1
          Flags = ["read", "notify"]
          Notifying = false
        /org/hrbridge/peripheral/hci1/service2 org.bluez.GattService1
          UUID = "0000180a-0000-1000-8000-00805f9b34fb"
          Primary = true
        /org/hrbridge/peripheral/hci1/service2/char0 org.bluez.GattCharacteristic1
          UUID = "00002a29-0000-1000-8000-00805f9b34fb"
          Service = /org/hrbridge/peripheral/hci1/service2
          Flags = ["read"]
          Value = [68 72 62 72 69 64 67 65]
        /org/hrbridge/peripheral/hci1/service2/char1 org.bluez.GattCharacteristic1
          UUID = "00002a24-0000-1000-8000-00805f9b34fb"
          Service = /org/hrbridge/peripheral/hci1/service2
          Flags = ["read"]
          Value = [68 72 62 72 69 64 67 65 20 70 65 72 69 70 68 65 72 61 6c]
        """

    @Test("the object tree with the control point: paths, interfaces and property values")
    func treeWithControlPoint() {
        let tree = PeripheralObjectTree(configuration: Self.configuration(controlPoint: true))
        #expect(tree.rendered == Self.snapshotWithControlPoint)
    }

    @Test("without the control point, 0x2A39 is all that is missing")
    func treeWithoutControlPoint() throws {
        let tree = PeripheralObjectTree(configuration: Self.configuration(controlPoint: false))
        var lines = Self.snapshotWithControlPoint.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasSuffix("service0/char2 org.bluez.GattCharacteristic1") })
        lines.removeSubrange(start...(start + 3))
        #expect(tree.rendered == lines.joined(separator: "\n"))
        #expect(tree.characteristic(.controlPoint) == nil)
    }

    @Test("GetManagedObjects holds services and characteristics, not the root or the advertisement")
    func managedObjects() throws {
        let tree = PeripheralObjectTree(configuration: Self.configuration(controlPoint: true))
        let objects = try #require(tree.managedObjects.objectPathDictionary)
        #expect(objects.count == 9)
        #expect(objects[Self.root] == nil)
        #expect(objects[Self.root + "/advertisement0"] == nil)
        #expect(tree.managedObjects.signature == "a{oa{sa{sv}}}")
        let location = try #require(objects[Self.root + "/service0/char1"]?.stringDictionary)
        #expect(location.keys.sorted() == ["org.bluez.GattCharacteristic1"])
        #expect(location["org.bluez.GattCharacteristic1"]?.stringDictionary?["Value"]?.bytes == [1])
    }

    @Test("the battery level and notify state show in the tree once set")
    func changingValues() {
        var tree = PeripheralObjectTree(configuration: Self.configuration(controlPoint: false))
        let set = tree.setValue([87], of: .batteryLevel)
        let setAgain = tree.setValue([87], of: .batteryLevel)
        let notifying = tree.setNotifying(true, of: .batteryLevel)
        #expect(set && !setAgain && notifying, "a change, no change, a change")
        let battery = tree.properties(
            at: Self.root + "/service1/char0", interface: PeripheralObjectTree.characteristicInterface)
        #expect(battery?.first { $0.name == "Value" }?.value == .bytes([87]))
        #expect(battery?.first { $0.name == "Notifying" }?.value == .boolean(true))
    }

    @Test("a configuration that cannot make object paths is refused")
    func invalidConfiguration() {
        #expect(PeripheralConfiguration(adapter: "hci1", localName: "x").problem == nil)
        #expect(PeripheralConfiguration(adapter: "hci1/../x", localName: "x").problem != nil)
        #expect(PeripheralConfiguration(adapter: "", localName: "x").problem != nil)
        #expect(PeripheralConfiguration(adapter: "hci1", localName: "x", objectPath: "/a//b").problem != nil)
        #expect(PeripheralConfiguration(adapter: "hci1", localName: "x", objectPath: "/a/b/").problem != nil)
        #expect(PeripheralConfiguration(adapter: "hci1", localName: "x", objectPath: "/").problem != nil)
        #expect(PeripheralConfiguration(adapter: "hci1", localName: "x").objectPath == Self.root)
    }

    // MARK: Advertised name

    /// A name case, shown escaped in test output (raw, an RTL override would turn the log around).
    struct NameCase: Sendable, CustomTestStringConvertible {
        let input: String
        let expected: String

        var testDescription: String {
            input.unicodeScalars.map {
                $0.isASCII && $0.value >= 0x20 ? String($0) : "\\u{\(String($0.value, radix: 16))}"
            }
            .joined()
        }
    }

    static let names: [NameCase] = [
        NameCase(input: "Polar H10 1234ABCD", expected: "Polar H10 1234ABCD"),  // 18 bytes: exactly fits
        NameCase(input: "Polar H10 1234ABCDE", expected: "Polar H10 1234ABCD"),
        NameCase(input: "Polar\u{0}H10\u{7}", expected: "PolarH10"),  // control characters
        NameCase(input: "Polar\nH10\t\r\n", expected: "Polar H10"),  // line breaks are spaces, then trimmed
        NameCase(input: "\u{1B}[31mRed", expected: "[31mRed"),  // a terminal escape loses its ESC
        NameCase(input: "abc\u{202E}exe.txt", expected: "abcexe.txt"),  // RTL override
        NameCase(input: "\u{2066}x\u{2069}\u{200F}", expected: "x"),  // isolates, RLM
        NameCase(input: "hi\u{E0041}\u{E0042}\u{FEFF}", expected: "hi"),  // tag characters smuggling text, BOM
        NameCase(input: "Polar H10 👨‍👩‍👧‍👦", expected: "Polar H10"),  // a 25-byte ZWJ sequence is not cut in the middle
        NameCase(input: "Run ❤️ 👨‍👩‍👧", expected: "Run ❤️"),
        NameCase(input: "ABCDEFGHIJKLMNOP🇩🇪", expected: "ABCDEFGHIJKLMNOP"),  // no half flag
        NameCase(input: "🏃‍♀️ H10", expected: "🏃‍♀️ H10"),
        NameCase(input: "e\u{301}e\u{301}", expected: "e\u{301}e\u{301}"),
        NameCase(input: String(repeating: "a", count: 200), expected: String(repeating: "a", count: 18)),
        NameCase(input: String(repeating: "é", count: 200), expected: String(repeating: "é", count: 9)),
        NameCase(input: "  Polar   H10  ", expected: "Polar H10"),
        NameCase(input: "", expected: "hrbridge HR"),
        NameCase(input: "   ", expected: "hrbridge HR"),
        NameCase(input: "\u{202E}\u{0}\u{E000}", expected: "hrbridge HR"),  // nothing printable left
    ]

    @Test("AdvertisedName.sanitized", arguments: names)
    func advertisedName(_ name: NameCase) {
        let sanitized = AdvertisedName.sanitized(name.input)
        #expect(sanitized == name.expected)
        #expect(sanitized.utf8.count <= AdvertisedName.maximumBytes)
    }

    // MARK: Calls

    static func server(controlPoint: Bool = true) -> PeripheralServer {
        var server = PeripheralServer(
            tree: PeripheralObjectTree(configuration: configuration(controlPoint: controlPoint)))
        server.trustedCaller = bluetoothd
        return server
    }

    static func call(
        _ path: String, _ interface: String?, _ member: String, _ arguments: [DBusValue] = [],
        from sender: String = bluetoothd
    ) -> DBusMethodCall {
        DBusMethodCall(sender: sender, path: root + path, interface: interface, member: member, arguments: arguments)
    }

    static let characteristic = "org.bluez.GattCharacteristic1"

    static func read(_ path: String, offset: UInt16? = nil) -> DBusMethodCall {
        call(path, characteristic, "ReadValue", [.propertyMap(offset.map { [("offset", .uint16($0))] } ?? [])])
    }

    static func write(_ bytes: [UInt8], offset: UInt16? = nil) -> DBusMethodCall {
        call(
            "/service0/char2", characteristic, "WriteValue",
            [.bytes(bytes), .propertyMap(offset.map { [("offset", .uint16($0))] } ?? [])])
    }

    static func errorName(_ reply: DBusMethodReply) -> String? {
        if case .failure(let error) = reply { error.name } else { nil }
    }

    static func values(_ reply: DBusMethodReply) -> [DBusValue]? {
        if case .success(let values) = reply { values } else { nil }
    }

    @Test("only org.bluez's owner is served: others get AccessDenied, counted, logged once each")
    func strangersRefused() {
        var server = Self.server()
        let stranger = server.answer(Self.call("", nil, "GetManagedObjects", from: ":1.99"))
        #expect(Self.errorName(stranger.reply) == "org.freedesktop.DBus.Error.AccessDenied")
        #expect(stranger.refusedCallerToLog == ":1.99")
        let again = server.answer(Self.read("/service0/char1").with(sender: ":1.99"))
        #expect(Self.errorName(again.reply) == "org.freedesktop.DBus.Error.AccessDenied")
        #expect(again.refusedCallerToLog == nil, "logged once")
        #expect(server.refusedCalls == 2)
        server.trustedCaller = nil
        #expect(Self.errorName(server.answer(Self.read("/service0/char1")).reply) == DBusError.accessDeniedName)
        #expect(server.refusedCalls == 3)
    }

    @Test("GetManagedObjects, Properties Get/GetAll/Set, unknown objects and methods")
    func objectManagerAndProperties() {
        var server = Self.server()
        let objects = Self.values(
            server.answer(Self.call("", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")).reply)
        #expect(objects == [server.tree.managedObjects])
        // bluetoothd may leave the interface out.
        #expect(Self.values(server.answer(Self.call("", nil, "GetManagedObjects")).reply) == objects)
        let uuid = server.answer(
            Self.call(
                "/service0", "org.freedesktop.DBus.Properties", "Get",
                [.string("org.bluez.GattService1"), .string("UUID")]))
        #expect(Self.values(uuid.reply) == [.variant(.string("0000180d-0000-1000-8000-00805f9b34fb"))])
        let advertisement = server.answer(
            Self.call(
                "/advertisement0", "org.freedesktop.DBus.Properties", "GetAll", [.string("org.bluez.LEAdvertisement1")])
        )
        #expect(
            Self.values(advertisement.reply)?.first?.stringDictionary?["LocalName"] == .string("Polar H10 1234ABCD"))
        #expect(
            Self.errorName(
                server.answer(Self.call("/service0", nil, "GetAll", [.string("org.bluez.GattCharacteristic1")])).reply)
                == DBusError.invalidArgsName)
        #expect(
            Self.errorName(
                server.answer(
                    Self.call(
                        "/service0", nil, "Set",
                        [.string("org.bluez.GattService1"), .string("Primary"), .variant(.boolean(false))])
                ).reply) == "org.freedesktop.DBus.Error.PropertyReadOnly")
        #expect(
            Self.errorName(server.answer(Self.call("/service9", nil, "GetAll", [.string("x")])).reply)
                == DBusError.unknownObjectName)
        #expect(
            Self.errorName(server.answer(Self.call("/service0/char1", Self.characteristic, "Explode")).reply)
                == DBusError.unknownMethodName)
        #expect(
            Self.errorName(server.answer(Self.call("/service0/char1", Self.characteristic, "ReadValue")).reply)
                == DBusError.invalidArgsName)
        let released = server.answer(Self.call("/advertisement0", "org.bluez.LEAdvertisement1", "Release"))
        #expect(released.released && Self.values(released.reply) == [])
    }

    @Test("ReadValue honours the offset; past the end is InvalidOffset; nothing to read is NotPermitted")
    func reads() {
        var server = Self.server()
        #expect(Self.values(server.answer(Self.read("/service0/char1")).reply) == [.bytes([1])])
        #expect(Self.values(server.answer(Self.read("/service0/char1", offset: 1)).reply) == [.bytes([])])
        #expect(
            Self.errorName(server.answer(Self.read("/service0/char1", offset: 2)).reply)
                == "org.bluez.Error.InvalidOffset")
        #expect(
            Self.values(server.answer(Self.read("/service2/char0", offset: 3)).reply) == [.bytes(Array("ridge".utf8))])
        #expect(Self.errorName(server.answer(Self.read("/service0/char0")).reply) == "org.bluez.Error.NotPermitted")
        #expect(
            Self.errorName(server.answer(Self.read("/service1/char0")).reply) == "org.bluez.Error.NotPermitted",
            "level unknown")
        #expect(server.setBatteryLevel(87) == nil, "nobody subscribed")
        #expect(Self.values(server.answer(Self.read("/service1/char0")).reply) == [.bytes([87])])
        _ = server.answer(Self.call("/service1/char0", Self.characteristic, "StartNotify"))
        #expect(server.setBatteryLevel(86)?.value == .bytes([86]))
        #expect(server.setBatteryLevel(86) == nil, "unchanged")
        #expect(server.setBatteryLevel(101) == nil, "out of range is unknown")
        #expect(Self.errorName(server.answer(Self.read("/service1/char0")).reply) == "org.bluez.Error.NotPermitted")
    }

    @Test("the control point takes 0x01; anything else is ATT 0x80 (org.bluez.Error.Failed), counted and bounded")
    func controlPoint() {
        var server = Self.server()
        let reset = server.answer(Self.write([0x01]))
        #expect(Self.values(reset.reply) == [] && reset.events == [.energyResetRequested])
        for (bytes, offset) in [([0x02], nil), ([], nil), ([0x01, 0x00], nil), ([0x01], 1)] as [([UInt8], UInt16?)] {
            let refused = server.answer(Self.write(bytes, offset: offset))
            guard case .failure(let error) = refused.reply else {
                Issue.record("\(bytes) accepted")
                continue
            }
            #expect(error == DBusError(name: "org.bluez.Error.Failed", message: "0x80"))
            #expect(refused.events == [.refusedWrite(bytes: bytes)])
        }
        let long = server.answer(Self.write(Array(repeating: 0xAA, count: 600)))
        #expect(long.events == [.refusedWrite(bytes: [0xAA, 0xAA, 0xAA, 0xAA])], "only the first bytes are kept")
        #expect(server.refusedWrites == 5)
        let location = server.answer(
            Self.call("/service0/char1", Self.characteristic, "WriteValue", [.bytes([2]), .propertyMap([])]))
        #expect(Self.errorName(location.reply) == "org.bluez.Error.NotPermitted")
        #expect(server.refusedWrites == 5, "not a control-point write")
    }

    @Test("StartNotify/StopNotify on 0x2A37: events and Notifying changes on transitions only")
    func notify() {
        var server = Self.server()
        let measurement = HeartRateMeasurement(heartRate: 72, sensorContact: .detected)
        #expect(server.notification(for: measurement) == nil, "nobody subscribed")
        let start = server.answer(Self.call("/service0/char0", Self.characteristic, "StartNotify"))
        #expect(start.events == [.notifying(true)])
        #expect(start.changes == [.init(path: Self.root + "/service0/char0", name: "Notifying", value: .boolean(true))])
        #expect(server.answer(Self.call("/service0/char0", nil, "StartNotify")).events == [])
        let notification = server.notification(for: measurement)
        #expect(notification?.change.value == .bytes(measurement.encoded()))
        #expect(Self.values(server.answer(Self.call("/service0/char0", nil, "Confirm")).reply) == [])
        #expect(
            Self.errorName(server.answer(Self.call("/service0/char1", nil, "StartNotify")).reply)
                == "org.bluez.Error.NotSupported")
        #expect(server.answer(Self.call("/service0/char0", nil, "StopNotify")).events == [.notifying(false)])
        _ = server.answer(Self.call("/service0/char0", nil, "StartNotify"))
        #expect(server.forgetSubscriptions() == [.notifying(false)])
        #expect(!server.isNotifying)
    }

    @Test("a frame fits the default ATT payload: oldest RR intervals left out, HR above 255 as uint16")
    func frames() {
        let rr = (1...12).map { RRInterval(raw: UInt16(800 + $0)) }
        let (bytes, trimmed) = PeripheralServer.frame(for: HeartRateMeasurement(heartRate: 70, rrIntervals: rr))
        #expect(trimmed == 3 && bytes.count == 20)
        #expect(bytes == HeartRateMeasurement(heartRate: 70, rrIntervals: Array(rr.suffix(9))).encoded())
        let withEnergy = PeripheralServer.frame(
            for: HeartRateMeasurement(heartRate: 300, valueFormat: .uint8, energyExpended: 12, rrIntervals: rr))
        #expect(withEnergy.trimmed == 5 && withEnergy.bytes.count == 19)
        #expect(withEnergy.bytes.prefix(3) == [0x19, 0x2C, 0x01], "uint16 flag set, 300 little-endian")
        let plain = HeartRateMeasurement(heartRate: 60, sensorContact: .detected, rrIntervals: [RRInterval(raw: 1024)])
        #expect(PeripheralServer.frame(for: plain).bytes == plain.encoded())
        #expect(PeripheralServer.frame(for: plain).trimmed == 0)
    }

    // MARK: Registration

    typealias Registration = PeripheralRegistration

    @Test("registration: bluetoothd starts, application then advertisement, restart, adapter away and back")
    func registrationLifecycle() {
        var machine = Registration(adapter: "hci1")
        #expect(machine.reason == "not started")
        #expect(machine.handle(.serviceStopped) == [.report(.advertising(on: false, reason: "bluetoothd not running"))])
        #expect(machine.handle(.serviceStarted(adapterPresent: true, powered: true)) == [.registerApplication])
        #expect(machine.handle(.applicationRegistered) == [.registerAdvertisement])
        #expect(
            machine.handle(.advertisementRegistered) == [
                .report(.registered(adapter: "hci1")),
                .report(.advertising(on: true, reason: "registered with bluetoothd")),
            ])
        #expect(machine.isAdvertising && machine.isRegistered && machine.reason == nil)
        #expect(machine.handle(.serviceStopped) == [.report(.advertising(on: false, reason: "bluetoothd stopped"))])
        #expect(!machine.isRegistered)
        // The new bluetoothd has no adapter yet: it comes with InterfacesAdded.
        #expect(
            machine.handle(.serviceStarted(adapterPresent: false, powered: false)) == [
                .report(.advertising(on: false, reason: "adapter hci1 missing"))
            ])
        #expect(machine.handle(.adapterAppeared(powered: true)) == [.registerApplication])
        #expect(machine.handle(.adapterAppeared(powered: true)) == [], "once")
        _ = machine.handle(.applicationRegistered)
        _ = machine.handle(.advertisementRegistered)
        #expect(
            machine.handle(.poweredChanged(false)) == [
                .report(.advertising(on: false, reason: "adapter hci1 powered off"))
            ])
        #expect(
            machine.handle(.poweredChanged(true)) == [
                .report(.advertising(on: true, reason: "registered with bluetoothd"))
            ])
        #expect(machine.handle(.adapterVanished) == [.report(.advertising(on: false, reason: "adapter hci1 missing"))])
        #expect(machine.handle(.adapterAppeared(powered: true)) == [.registerApplication])
        #expect(machine.handle(.stopped) == [.report(.advertising(on: false, reason: "stopped"))])
        #expect(machine.reason == "stopped")
    }

    @Test(
        "advertising afresh, paused for the strap and resumed: the application stays; a new bluetoothd keeps the pause")
    func registrationPause() {
        var machine = Registration(adapter: "hci0")
        #expect(machine.handle(.readvertiseRequested) == [], "nothing registered yet")
        _ = machine.handle(.serviceStarted(adapterPresent: true, powered: true))
        _ = machine.handle(.applicationRegistered)
        _ = machine.handle(.advertisementRegistered)
        #expect(machine.handle(.readvertiseRequested) == [.unregisterAdvertisement, .registerAdvertisement])
        #expect(machine.handle(.advertisementRegistered) == [], "advertising again: nothing new to report")
        #expect(
            machine.handle(.pauseRequested("the strap first")) == [
                .unregisterAdvertisement, .report(.advertising(on: false, reason: "the strap first")),
            ])
        #expect(machine.handle(.pauseRequested("again")) == [], "one pause at a time")
        #expect(machine.handle(.readvertiseRequested) == [], "not while paused")
        #expect(machine.handle(.advertisingInstanceFreed) == [])
        #expect(machine.applicationRegistered && !machine.isAdvertising)
        // bluetoothd restarts meanwhile: the application comes back, the advertisement waits.
        _ = machine.handle(.serviceStopped)
        #expect(machine.handle(.serviceStarted(adapterPresent: true, powered: true)) == [.registerApplication])
        #expect(machine.handle(.applicationRegistered) == [.report(.advertising(on: false, reason: "the strap first"))])
        #expect(machine.handle(.resumeRequested) == [.registerAdvertisement])
        #expect(
            machine.handle(.advertisementRegistered) == [
                .report(.registered(adapter: "hci0")),
                .report(.advertising(on: true, reason: "registered with bluetoothd")),
            ])
        #expect(machine.handle(.resumeRequested) == [], "not paused")
    }

    @Test(
        "paused while RegisterAdvertisement is out: the advertisement it returns is taken back, and resuming registers it again"
    )
    func registrationPausedInFlight() {
        var machine = Registration(adapter: "hci0")
        _ = machine.handle(.serviceStarted(adapterPresent: true, powered: true))
        #expect(machine.handle(.applicationRegistered) == [.registerAdvertisement])
        #expect(
            machine.handle(.pauseRequested("the strap first")) == [
                .report(.advertising(on: false, reason: "the strap first"))
            ], "nothing held yet: nothing to unregister")
        #expect(machine.handle(.advertisementRegistered) == [.unregisterAdvertisement])
        #expect(!machine.advertisementRegistered && !machine.isAdvertising)
        #expect(machine.reason == "the strap first")
        // The same when the call's reply is lost and its retry says AlreadyExists.
        var lostReply = Registration(adapter: "hci0")
        _ = lostReply.handle(.serviceStarted(adapterPresent: true, powered: true))
        _ = lostReply.handle(.applicationRegistered)
        _ = lostReply.handle(.pauseRequested("the strap first"))
        #expect(
            lostReply.handle(.advertisementFailed(DBusError(name: "org.bluez.Error.AlreadyExists", message: "")))
                == [.unregisterAdvertisement])
        #expect(machine.handle(.resumeRequested) == [.registerAdvertisement])
        #expect(
            machine.handle(.advertisementRegistered) == [
                .report(.registered(adapter: "hci0")),
                .report(.advertising(on: true, reason: "registered with bluetoothd")),
            ])
    }

    @Test("registration failures: NotPermitted waits for a free instance; a vanished adapter waits for its return")
    func registrationFailures() {
        var machine = Registration(adapter: "hci1")
        _ = machine.handle(.serviceStarted(adapterPresent: true, powered: true))
        _ = machine.handle(.applicationRegistered)
        let full = DBusError(name: "org.bluez.Error.NotPermitted", message: "Maximum advertisements reached")
        #expect(
            machine.handle(.advertisementFailed(full)) == [
                .report(.advertising(on: false, reason: "NotPermitted: no advertising instance left"))
            ])
        #expect(machine.handle(.advertisingInstanceFreed) == [.registerAdvertisement])
        #expect(machine.handle(.advertisingInstanceFreed) == [], "one attempt per failure")
        #expect(
            machine.handle(.advertisementFailed(DBusError(name: "org.bluez.Error.AlreadyExists", message: ""))).first
                == .report(.registered(adapter: "hci1")), "already ours")
        #expect(
            machine.handle(.advertisementReleased) == [
                .report(.advertising(on: false, reason: "advertisement released by bluetoothd"))
            ])
        #expect(machine.handle(.poweredChanged(true)) == [.registerAdvertisement])

        var gone = Registration(adapter: "hci1")
        _ = gone.handle(.serviceStarted(adapterPresent: true, powered: true))
        let unknown = DBusError(
            name: DBusError.unknownObjectName, message: "Method \"RegisterApplication\" doesn't exist")
        #expect(
            gone.handle(.applicationFailed(unknown)) == [
                .report(.advertising(on: false, reason: "adapter hci1 missing"))
            ])
        #expect(gone.handle(.adapterAppeared(powered: true)) == [.registerApplication])
        let other = DBusError(name: "org.bluez.Error.Failed", message: String(repeating: "x", count: 500))
        guard case .report(.advertising(false, let reason)) = gone.handle(.applicationFailed(other)).first else {
            Issue.record("no report")
            return
        }
        #expect(reason.hasPrefix("RegisterApplication: Failed: xxx") && reason.count < 160)
    }
}

extension DBusMethodCall {
    func with(sender: String) -> DBusMethodCall {
        var call = self
        call.sender = sender
        return call
    }
}
