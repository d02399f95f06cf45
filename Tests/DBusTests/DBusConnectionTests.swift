import BusHarness
import DBus
import Foundation
import Logging
import Synchronization
import Testing

private let logger = Logger(label: "test")

@Suite("D-Bus client against a real dbus-daemon", .serialized)
struct DBusConnectionTests {
    @Test("connects, registers, and calls the bus itself")
    func connects() async throws {
        try await withPrivateBus { bus in
            let connection = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            #expect(connection.uniqueName.hasPrefix(":"))
            #expect(connection.isConnected)
            let names = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ListNames")
            #expect(names.first?.arrayElements?.contains(.string(connection.uniqueName)) == true)
            await connection.close()
            #expect(!connection.isConnected)
            await #expect(throws: DBusError.self) {
                _ = try await connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "GetId")
            }
        }
    }

    @Test("DBUS_SYSTEM_BUS_ADDRESS is honoured for the system bus (set for a child, never in this process)")
    func systemBusAddress() async throws {
        try await withPrivateBus { bus in
            // This connection stands in for bluetoothd on the private bus; `hrbridge devices` opens
            // `.system` and can only reach it through the variable in its environment.
            let bluez = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try await bluez.requestName("org.bluez")
            let calls = Mutex<[String]>([])
            try bluez.export(path: "/") { call in
                calls.withLock { $0.append(call.member) }
                return .success([.dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries: [])])
            }
            let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("hrbridge").path
            let devices = try Spawned(
                binary, ["devices", "--json"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], label: "devices")
            let status = await devices.wait()
            #expect(calls.withLock { $0 }.contains("GetManagedObjects"), "\(devices.report)")
            #expect(status == 69, "no adapter on this bus: \(devices.report)")
            await bluez.close()
        }
    }

    @Test("every value type round-trips through an exported object")
    func roundTrip() async throws {
        try await withPrivateBus { bus in
            let server = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let client = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try server.export(path: "/org/hrbridge/Echo") { call in
                call.member == "Echo"
                    ? .success(call.arguments)
                    : .failure(DBusError(name: "org.hrbridge.Error.Nope", message: "no \(call.member)"))
            }
            let values: [DBusValue] = [
                .byte(255), .boolean(true), .int16(-2), .uint16(65535), .int32(-70000), .uint32(4_000_000_000),
                .int64(-1 << 40), .uint64(1 << 63), .double(3.25), .string("héllo"), .objectPath("/org/bluez/hci0"),
                .signature("a{sv}"), .bytes([0x16, 0x42, 0x00, 0xFF]), .bytes([]),
                .array(elementSignature: "s", [.string("a"), .string("b")]), .array(elementSignature: "o", []),
                .propertyMap([("RSSI", .int16(-60)), ("UUIDs", .array(elementSignature: "s", [.string("180d")]))]),
                .dictionary(
                    keySignature: "o", valueSignature: "a{sv}",
                    entries: [
                        DBusDictionaryEntry(key: .objectPath("/x"), value: .propertyMap([("Value", .bytes([1, 2]))]))
                    ]),
                .structure([.string("s"), .uint32(7), .variant(.bytes([9]))]),
                .variant(.variant(.int32(5))),
            ]
            let echoed = try await client.call(
                destination: server.uniqueName, path: "/org/hrbridge/Echo", interface: "org.hrbridge.Echo",
                member: "Echo", arguments: values)
            #expect(echoed == values)
            await #expect(throws: DBusError(name: "org.hrbridge.Error.Nope", message: "no Other")) {
                _ = try await client.call(
                    destination: server.uniqueName, path: "/org/hrbridge/Echo", interface: "org.hrbridge.Echo",
                    member: "Other")
            }
            await client.close()
            await server.close()
        }
    }

    @Test("a unix file descriptor crosses the bus")
    func fileDescriptor() async throws {
        try await withPrivateBus { bus in
            let server = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let client = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            #expect(client.canPassFileDescriptors)
            try server.export(path: "/fd", keepingDescriptors: true) { call in
                guard case .unixFD(let descriptor) = call.arguments.first else {
                    return .failure(.unexpectedReply("no fd"))
                }
                var byte: UInt8 = 0
                let count = read(descriptor, &byte, 1)
                close(descriptor)
                return .success([.int32(count == 1 ? Int32(byte) : -1)])
            }
            var ends: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
            var byte: UInt8 = 42
            _ = write(ends[1], &byte, 1)
            let reply = try await client.call(
                destination: server.uniqueName, path: "/fd", interface: "org.hrbridge.Fd", member: "Read",
                arguments: [.unixFD(ends[0])])
            #expect(reply == [.int32(42)])
            close(ends[0])
            close(ends[1])
            await client.close()
            await server.close()
        }
    }

    @Test("unknown services, objects and timeouts are typed errors carrying the D-Bus name")
    func errors() async throws {
        try await withPrivateBus { bus in
            let server = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let client = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try server.export(path: "/slow") { _ in
                try? await Task.sleep(for: .seconds(2))
                return .success([])
            }
            do {
                _ = try await client.call(destination: "org.nobody", path: "/", interface: "x.y", member: "Z")
                Issue.record("expected ServiceUnknown")
            } catch let error as DBusError {
                #expect(error.name == DBusError.serviceUnknownName)
            }
            do {
                _ = try await client.call(
                    destination: server.uniqueName, path: "/slow", interface: "x.y", member: "Z",
                    timeout: .milliseconds(200))
                Issue.record("expected NoReply")
            } catch let error as DBusError {
                #expect(error.name == DBusError.noReplyName)
            }
            do {
                _ = try await client.call(
                    destination: server.uniqueName, path: "/nothing", interface: "x.y", member: "Z")
                Issue.record("expected UnknownObject or UnknownMethod")
            } catch let error as DBusError {
                #expect(error.name == DBusError.unknownObjectName || error.name == DBusError.unknownMethodName)
            }
            await client.close()
            await server.close()
        }
    }

    @Test("invalid paths and names are typed errors: libdbus, whose checks abort the process, never sees them")
    func invalidNames() async throws {
        try await withPrivateBus { bus in
            let server = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let client = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let calls: [(destination: String, path: String, interface: String, member: String)] = [
                (server.uniqueName, "not/a/path", "x.y", "Z"), (server.uniqueName, "/a//b", "x.y", "Z"),
                ("no spaces allowed", "/", "x.y", "Z"), (server.uniqueName, "/", "notaninterface", "Z"),
                (server.uniqueName, "/", "x.y", "bad-member"), (server.uniqueName, "/", "x.y", ""),
            ]
            for call in calls {
                await #expect(
                    throws: DBusError(
                        name: DBusError.invalidArgsName, message: "invalid path or names for \(call.member)")
                ) {
                    _ = try await client.call(
                        destination: call.destination, path: call.path, interface: call.interface, member: call.member)
                }
            }
            #expect(throws: DBusError.self) { try server.export(path: "relative") { _ in .success([]) } }
            #expect(throws: DBusError.self) {
                try server.emitSignal(path: "/", interface: "bad interface", member: "Changed", arguments: [])
            }
            // A handler failing with a name D-Bus cannot carry: the caller still gets an answer.
            try server.export(path: "/fails") { _ in .failure(DBusError(name: "not an error name", message: "no")) }
            do {
                _ = try await client.call(destination: server.uniqueName, path: "/fails", interface: "x.y", member: "Z")
                Issue.record("expected an error reply")
            } catch let error as DBusError {
                #expect(error.name == DBusError.failedName)
                #expect(error.message.contains("invalid error name"))
            }
            await client.close()
            await server.close()
        }
    }

    @Test("connections dropped without closing while signals stream in: 100 in a row, the process survives")
    func droppedWhileDispatching() async throws {
        try await withPrivateBus { bus in
            let emitter = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            for round in 0..<100 {
                var listener: DBusConnection? = try await DBusConnection.connect(
                    bus: .address(bus.address), logger: logger)
                let subscription = try await listener!.subscribe(
                    matching: MatchRule(sender: emitter.uniqueName, interface: "org.hrbridge.Test", member: "Tick"))
                for index in 0..<20 {
                    try emitter.emitSignal(
                        path: "/tick", interface: "org.hrbridge.Test", member: "Tick",
                        arguments: [.uint32(UInt32(round * 100 + index))])
                }
                // The first signal is in: the loop thread is dispatching the rest as the last
                // reference goes (a filter that revived the connection crashed here).
                for await _ in subscription.signals { break }
                listener = nil
            }
            #expect(emitter.isConnected)
            await emitter.close()
        }
    }

    @Test("signals matching a rule arrive in order and are counted; others do not")
    func signals() async throws {
        try await withPrivateBus { bus in
            let emitter = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let listener = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let subscription = try await listener.subscribe(
                matching: MatchRule(
                    sender: emitter.uniqueName, pathNamespace: "/org/bluez",
                    interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            let stream = subscription.signals
            for index in 0..<100 {
                try emitter.emitSignal(
                    path: "/org/bluez/hci0/dev_X/char\(index)", interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged",
                    arguments: [
                        .string("org.bluez.GattCharacteristic1"),
                        .propertyMap([("Value", .bytes([0x00, UInt8(index)]))]), .array(elementSignature: "s", []),
                    ])
                try emitter.emitSignal(
                    path: "/elsewhere", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    arguments: [.string("x")])
                try emitter.emitSignal(path: "/org/bluez/hci0", interface: "org.other", member: "Thing", arguments: [])
            }
            var received: [UInt8] = []
            for await signal in stream {
                received.append(signal.arguments[1].stringDictionary?["Value"]?.bytes?[1] ?? 255)
                if received.count == 100 { break }
            }
            #expect(received == (0..<100).map(UInt8.init))
            // A call's reply comes after every signal sent before it: all 100 were counted by then.
            _ = try await listener.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetId")
            #expect(subscription.delivered == 100)
            await emitter.close()
            await listener.close()
        }
    }

    @Test("a byte-property tap takes exactly the one-Value changes it claims; every other signal reaches the stream")
    func bytePropertyTap() async throws {
        try await withPrivateBus { bus in
            let emitter = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try await emitter.requestName("org.hrbridge.Strap")
            let listener = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let stream = try await listener.signals(
                matching: MatchRule(sender: "org.hrbridge.Strap", member: "PropertiesChanged"))
            let tapped = Mutex<[String]>([])
            let tap = listener.tapByteProperty(
                sender: "org.hrbridge.Strap", interface: "org.bluez.GattCharacteristic1", property: "Value"
            ) { path, bytes in
                // Claims /claimed only: an unclaimed change must still reach the stream.
                guard path.hasSuffix("/claimed") else { return false }
                tapped.withLock { $0.append("\(path) \(bytes)") }
                return true
            }
            func changed(_ path: String, _ arguments: [DBusValue]) throws {
                try emitter.emitSignal(
                    path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    arguments: arguments)
            }
            let characteristic = DBusValue.string("org.bluez.GattCharacteristic1")
            let none = DBusValue.array(elementSignature: "s", [])
            try changed("/c/claimed", [characteristic, .propertyMap([("Value", .bytes([0x06, 72]))]), none])
            try changed("/c/unclaimed", [characteristic, .propertyMap([("Value", .bytes([0x06, 73]))]), none])
            try changed("/c/claimed", [characteristic, .propertyMap([("Value", .string("06 48"))]), none])
            try changed(
                "/c/claimed",
                [characteristic, .propertyMap([("Value", .bytes([1])), ("Notifying", .boolean(true))]), none])
            try changed(
                "/c/claimed",
                [characteristic, .propertyMap([("Value", .bytes([2]))]), .array(elementSignature: "s", [.string("X")])])
            try changed("/c/claimed", [.string("org.bluez.Device1"), .propertyMap([("Value", .bytes([3]))]), none])
            try changed("/c/claimed", [characteristic, .propertyMap([("Notifying", .boolean(false))]), none])
            try changed("/c/claimed", [characteristic, .propertyMap([("Value", .bytes([]))]), none])
            try changed("/c/claimed", [characteristic, .propertyMap([("Value", .bytes([0x06, 74]))])])
            try changed("/c/last", [.string("end")])
            var streamed: [String] = []
            for await signal in stream {
                streamed.append(signal.path)
                if signal.path == "/c/last" { break }
            }
            #expect(tapped.withLock { $0 } == ["/c/claimed [6, 72]", "/c/claimed []", "/c/claimed [6, 74]"])
            #expect(streamed == ["/c/unclaimed"] + Array(repeating: "/c/claimed", count: 5) + ["/c/last"])
            listener.removeTap(tap)
            try changed("/c/claimed", [characteristic, .propertyMap([("Value", .bytes([0x06, 75]))]), none])
            for await signal in stream {
                #expect(signal.path == "/c/claimed")
                break
            }
            #expect(tapped.withLock { $0.count } == 3)
            await emitter.close()
            await listener.close()
        }
    }

    @Test("a task preferring the connection's executor runs on its loop thread, and still runs after close")
    func loopExecutor() async throws {
        try await withPrivateBus { bus in
            let emitter = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let listener = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let stream = try await listener.signals(matching: MatchRule(sender: emitter.uniqueName, member: "Tick"))
            /// The kernel's name for the calling thread.
            @Sendable func threadName() -> String {
                ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let consumer = Task(executorPreference: listener.executor) { () -> [String] in
                var names = [threadName()]
                for await signal in stream {
                    names.append("\(threadName()) \(signal.member)")
                    break
                }
                return names
            }
            try emitter.emitSignal(path: "/t", interface: "org.hrbridge.Test", member: "Tick", arguments: [])
            #expect(await consumer.value == ["hrbridge.dbus", "hrbridge.dbus Tick"])
            await listener.close()
            // The loop has ended: a task that prefers it goes on elsewhere instead of hanging.
            let after = await Task(executorPreference: listener.executor) { threadName() }.value
            #expect(after != "hrbridge.dbus" && !after.isEmpty)
            // Closed from its own loop thread: the close still runs before the loop ends (libdbus
            // aborts the process when an unclosed private connection is released).
            let closedFromWithin = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            await Task(executorPreference: closedFromWithin.executor) { await closedFromWithin.close() }.value
            #expect(!closedFromWithin.isConnected)
            await emitter.close()
        }
    }

    @Test("name owners: lookup, and NameOwnerChanged when the owner leaves")
    func nameOwners() async throws {
        try await withPrivateBus { bus in
            let owner = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let watcher = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            #expect(try await watcher.nameOwner(of: "org.hrbridge.Test") == nil)
            let changes = try await watcher.nameOwnerChanges(of: "org.hrbridge.Test")
            try await owner.requestName("org.hrbridge.Test")
            #expect(try await watcher.nameOwner(of: "org.hrbridge.Test") == owner.uniqueName)
            let other = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            await #expect(throws: DBusError.self) { try await other.requestName("org.hrbridge.Test") }
            await owner.close()
            var seen: [NameOwnerChange] = []
            for await change in changes {
                seen.append(change)
                if seen.count == 2 { break }
            }
            #expect(seen.first?.newOwner == owner.uniqueName)
            #expect(seen.last == NameOwnerChange(name: "org.hrbridge.Test", oldOwner: owner.uniqueName, newOwner: nil))
            await other.close()
            await watcher.close()
        }
    }

    @Test("closing finishes signal streams and fails later calls")
    func closing() async throws {
        try await withPrivateBus { bus in
            let connection = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let stream = try await connection.signals(matching: MatchRule(interface: "org.nothing"))
            let waiter = Task {
                for await _ in stream {}; return true
            }
            await connection.close()
            #expect(await waiter.value)
        }
    }

    @Test("file descriptors in signals and replies are closed unless kept: 200 signals × 16 fds leave none open")
    func descriptorsAreOwned() async throws {
        try await withPrivateBus { bus in
            let emitter = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let listener = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            #expect(emitter.canPassFileDescriptors && listener.canPassFileDescriptors)
            // A file of its own, so its descriptors can be told from any other test's.
            let marker = FileManager.default.temporaryDirectory.appendingPathComponent("fd-marker-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: marker) }
            let descriptor = open(marker.path, O_RDONLY)
            #expect(descriptor >= 0)
            defer { close(descriptor) }
            func openOnMarker() -> Int {
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return entries.filter {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == marker.path
                }.count
            }
            let subscription = try await listener.subscribe(
                matching: MatchRule(sender: emitter.uniqueName, member: "Descriptors"))
            var received = 0
            var iterator = subscription.signals.makeAsyncIterator()
            for _ in 0..<200 {
                try emitter.emitSignal(
                    path: "/org/hrbridge/Fds", interface: "org.hrbridge.Test", member: "Descriptors",
                    arguments: Array(repeating: .unixFD(descriptor), count: 16))
                guard let signal = await iterator.next() else { break }
                #expect(signal.arguments == Array(repeating: .unixFD(-1), count: 16), "closed on arrival")
                received += 1
            }
            #expect(received == 200)
            try await eventually("every duplicate of the marker's descriptor to be closed") { openOnMarker() == 1 }

            // A reply carrying a descriptor: closed unless the caller keeps it.
            try emitter.export(path: "/org/hrbridge/Fds") { _ in .success([.unixFD(descriptor), .uint16(23)]) }
            let dropped = try await listener.call(
                destination: emitter.uniqueName, path: "/org/hrbridge/Fds", interface: "org.hrbridge.Test",
                member: "Acquire")
            #expect(dropped == [.unixFD(-1), .uint16(23)])
            let kept = try await listener.call(
                destination: emitter.uniqueName, path: "/org/hrbridge/Fds", interface: "org.hrbridge.Test",
                member: "Acquire", keepingDescriptors: true)
            guard case .unixFD(let duplicate) = kept.first, duplicate >= 0 else {
                Issue.record("no descriptor kept: \(kept)")
                return
            }
            try await eventually("the kept duplicate only") { openOnMarker() == 2 }
            close(duplicate)
            try await eventually("the original only") { openOnMarker() == 1 }
            await listener.close()
            await emitter.close()
        }
    }

    @Test("signals must come from the owner of the name they are subscribed from: forgeries are dropped and counted")
    func forgedSignals() async throws {
        try await withPrivateBus { bus in
            let strap = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try await strap.requestName("org.hrbridge.Strap")
            let listener = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let forger = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            let stream = try await listener.signals(matching: MatchRule(sender: "org.hrbridge.Strap"))
            let owners = try await listener.nameOwnerChanges(of: "org.hrbridge.Strap")
            let tapped = Mutex<[[UInt8]]>([])
            _ = listener.tapByteProperty(
                sender: "org.hrbridge.Strap", interface: "org.bluez.GattCharacteristic1", property: "Value"
            ) { _, bytes in
                tapped.withLock { $0.append(bytes) }
                return true
            }
            let characteristic = DBusValue.string("org.bluez.GattCharacteristic1")
            let none = DBusValue.array(elementSignature: "s", [])
            func value(_ heartRate: UInt8) -> [DBusValue] {
                [characteristic, .propertyMap([("Value", .bytes([0x06, heartRate]))]), none]
            }
            // Sent straight to the listener (match rules do not stop a unicast signal).
            try forger.emitSignal(
                path: "/c", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: value(238), destination: listener.uniqueName)
            try forger.emitSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
                arguments: [.objectPath("/c"), .array(elementSignature: "s", [characteristic])],
                destination: listener.uniqueName)
            try forger.emitSignal(
                path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arguments: [.string("org.hrbridge.Strap"), .string(strap.uniqueName), .string("")],
                destination: listener.uniqueName)
            try await eventually("the three forgeries to be dropped") { listener.forgedSignals == 3 }

            try strap.emitSignal(
                path: "/c", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: value(72))
            try strap.emitSignal(path: "/c/last", interface: "org.hrbridge.Test", member: "Last", arguments: [])
            var streamed: [String] = []
            for await signal in stream {
                streamed.append("\(signal.interface).\(signal.member)")
                if signal.path == "/c/last" { break }
            }
            #expect(streamed == ["org.hrbridge.Test.Last"], "nothing forged reached the stream")
            #expect(tapped.withLock { $0 } == [[0x06, 72]], "only the real Value was tapped")

            // The owner leaves and another takes the name (bluetoothd restarting): the bus's own
            // NameOwnerChanged is seen, and the new owner's signals are delivered.
            await strap.close()
            var changes: [NameOwnerChange] = []
            var ownerChanges = owners.makeAsyncIterator()
            // The bus releases the name when it has processed the disconnection, not before.
            while let change = await ownerChanges.next() {
                changes.append(change)
                if change.newOwner == nil { break }
            }
            let successor = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try await successor.requestName("org.hrbridge.Strap")
            while let change = await ownerChanges.next() {
                changes.append(change)
                if change.newOwner == successor.uniqueName { break }
            }
            #expect(changes.first?.newOwner == nil, "the forged change was never seen: \(changes)")
            try successor.emitSignal(
                path: "/c", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: value(73))
            try await eventually("the successor's Value") { tapped.withLock { $0.count } == 2 }
            #expect(listener.forgedSignals == 3)
            await successor.close()
            await forger.close()
            await listener.close()
        }
    }

    @Test("heartbeats are answered by the loop thread, and not while it is wedged")
    func heartbeats() async throws {
        try await withPrivateBus { bus in
            let emitter = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            try await emitter.requestName("org.hrbridge.Strap")
            let listener = try await DBusConnection.connect(bus: .address(bus.address), logger: logger)
            _ = try await listener.subscribe(matching: MatchRule(sender: "org.hrbridge.Strap"))
            listener.requestHeartbeat()
            try await eventually("the first heartbeat") { listener.heartbeats == 1 }
            // A tap runs on the loop thread: one that blocks wedges the loop.
            let release = Mutex(false)
            let entered = Mutex(false)
            _ = listener.tapByteProperty(
                sender: "org.hrbridge.Strap", interface: "org.bluez.GattCharacteristic1", property: "Value"
            ) { _, _ in
                entered.withLock { $0 = true }
                while !release.withLock({ $0 }) { usleep(1_000) }
                return true
            }
            try emitter.emitSignal(
                path: "/c", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: [
                    .string("org.bluez.GattCharacteristic1"), .propertyMap([("Value", .bytes([6, 60]))]),
                    .array(elementSignature: "s", []),
                ])
            // While the loop is stuck in the tap, heartbeats go unanswered (whatever the time).
            try await eventually("the loop to be stuck in the tap") { entered.withLock { $0 } }
            listener.requestHeartbeat()
            listener.requestHeartbeat()
            #expect(listener.heartbeats == 1, "a wedged loop answers nothing")
            release.withLock { $0 = true }
            try await eventually("the loop to answer again") { listener.heartbeats == 3 }
            await listener.close()
            await emitter.close()
        }
    }
}
