// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "hrbridge",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "Samples", targets: ["Samples"]),
        .library(name: "Sensors", targets: ["Sensors"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "WorkoutStore", targets: ["WorkoutStore"]),
        .library(name: "PostgresStore", targets: ["PostgresStore"]),
        .library(name: "WorkoutExport", targets: ["WorkoutExport"]),
        .library(name: "WorkoutPlans", targets: ["WorkoutPlans"]),
        .library(name: "Workouts", targets: ["Workouts"]),
        .library(name: "SensorSimulator", targets: ["SensorSimulator"]),
        .library(name: "Bridge", targets: ["Bridge"]),
        .library(name: "JSONSupport", targets: ["JSONSupport"]),
        .library(name: "WorkoutRecording", targets: ["WorkoutRecording"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "BridgeOut", targets: ["BridgeOut"]),
        .library(name: "Wire", targets: ["Wire"]),
        .library(name: "BridgeClient", targets: ["BridgeClient"]),
        .library(name: "LabStreaming", targets: ["LabStreaming"]),
        .executable(name: "hrbridge", targets: ["hrbridge"]),
        .executable(name: "hrbridged", targets: ["hrbridged"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Already built for postgres-nio: HMAC-SHA256 for gateways' signed envelopes.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // The libdbus-1 C API; only the DBus module imports it.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // Named threads for blocking loops and calls, off Swift concurrency's pool.
        .target(name: "Threads"),
        // A Swift D-Bus client over libdbus: connection, typed values, calls, signals, exported objects.
        .target(
            name: "DBus",
            dependencies: [
                "CDBus", "Threads", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The BlueZ implementation of the sensor adapter: discovery, connect, notify, pairing, reconnect.
        .target(
            name: "BlueZ",
            dependencies: [
                "DBus", "GATT", "Sensors", "Threads", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Sensors heard through other gateways over MQTT: the measurement envelope and the adapter.
        .target(
            name: "RemoteSensors",
            dependencies: [
                "GATT", "Sensors", "MQTT", "Wire", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // libmosquitto, the broker project's own client library; only the MQTT module imports it.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // An MQTT client over libmosquitto: reconnects by itself, a bounded outbox while the broker is away.
        .target(
            name: "MQTT",
            dependencies: [
                "CMosquitto", "Threads", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // BlueZ's libbluetooth (HCI sockets); only the Doctor module imports it.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // `hrbridge doctor`: checks each layer from the kernel up.
        .target(
            name: "Doctor",
            dependencies: ["CBluetooth", "DBus", "GATT", .product(name: "Logging", package: "swift-log")]
        ),
        // SQLite persistence (GRDB): workouts, samples, queries, the recovery journal.
        .target(
            name: "WorkoutStore",
            dependencies: [
                "Workouts", "Samples", "Sensors", "GATT", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Structured workouts: plans, their file format, validation, live execution.
        // The store on a PostgreSQL server (postgres-nio): the same StoreBackend as SQLite, shared by hubs.
        .target(
            name: "PostgresStore",
            dependencies: [
                "WorkoutStore", "Workouts", "Samples", "Sensors", "GATT",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "WorkoutPlans",
            dependencies: ["Workouts", "Samples", "JSONSupport", .product(name: "Logging", package: "swift-log")],
            exclude: ["plan.schema.json"]),
        // One workout being recorded, for the CLI and the daemon alike: session, builder, data
        // source, streamer, journal, plan runner, finish.
        .target(
            name: "WorkoutRecording",
            dependencies: [
                "Workouts", "WorkoutStore", "WorkoutPlans", "Samples", "Sensors",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // FIT, TCX and CSV writers.
        .target(name: "WorkoutExport", dependencies: ["Workouts", "Samples", "Sensors"]),
        // How the project writes and reads JSON: one encoder setup, `null`-keeping optionals, a
        // value type for documents of unknown shape, and a hand writer for per-frame lines.
        .target(name: "JSONSupport"),
        // Pure frame decoders/encoders, UUIDs and stateful derivers. Foundation-free.
        .target(name: "GATT"),
        // Quantity types, units, samples, and the turn of decoded frames into samples.
        .target(name: "Samples", dependencies: ["GATT", "Sensors"]),
        // The adapter abstraction: sensor identity, events, commands, the injected wall clock. No C, no D-Bus.
        .target(name: "Sensors", dependencies: ["GATT"]),
        // The Lab Streaming Layer: liblsl loaded at run time (never linked), outlets for HR, RR,
        // ECG, ACC, HRV and markers.
        .target(
            name: "LabStreaming",
            dependencies: ["GATT", "Sensors", "Workouts", .product(name: "Logging", package: "swift-log")]
        ),
        // The mock adapter: simulated straps emitting raw frames through the same decoders.
        .target(
            name: "SensorSimulator",
            dependencies: ["GATT", "Sensors", "JSONSupport", .product(name: "Logging", package: "swift-log")]
        ),
        // Workout session, live builder, data source, statistics, zones, HRV and energy.
        .target(
            name: "Workouts",
            dependencies: ["GATT", "Samples", "Sensors", .product(name: "Logging", package: "swift-log")]
        ),
        // The daemon: configuration, sensor and session managers, live API (REST, SSE, WebSocket), systemd notify.
        .target(
            name: "Bridge",
            dependencies: [
                "GATT", "Samples", "Sensors", "Workouts", "SensorSimulator", "BlueZ", "DBus", "WorkoutStore",
                "WorkoutExport", "WorkoutPlans", "JSONSupport", "WorkoutRecording", "MQTT", "RemoteSensors",
                "PostgresStore", "BridgeOut", "Wire", "LabStreaming", "Threads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [
                // Compiled into the binary (no resource bundle to install next to it).
                .embedInCode("API/openapi.json"), .embedInCode("Web/index.html"), .embedInCode("Web/overlay.html"),
                .embedInCode("Web/board.html"), .embedInCode("Web/app.css"), .embedInCode("Web/live.js"),
                .embedInCode("Web/chart.js"), .embedInCode("Web/dashboard.js"), .embedInCode("Web/board.js"),
                .embedInCode("Web/board.css"), .embedInCode("Web/overlay.js"), .embedInCode("Web/overlay.css"),
            ]
        ),
        // What the daemon says to its clients and its peers: the JSON wire types, ISO 8601 times, and
        // the MQTT topics, built and parsed in one place.
        .target(
            name: "Wire",
            dependencies: [
                "GATT", "Samples", "Sensors", "Workouts", "WorkoutStore", "WorkoutExport", "WorkoutPlans",
                "JSONSupport",
            ]
        ),
        // Readings passed on: re-encoded heart-rate frames for the Bluetooth peripheral, OSC for VR avatars.
        .target(
            name: "BridgeOut",
            dependencies: ["GATT", "Sensors", .product(name: "Logging", package: "swift-log")]
        ),
        // A client of the daemon's API (REST and Server-Sent Events) over its Unix socket or TCP.
        .target(
            name: "BridgeClient",
            dependencies: [
                "Wire", "JSONSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The command line: thin commands over the modules. It does not link the server stack
        // (Hummingbird, postgres-nio, TLS): `make demo` builds this alone.
        .executableTarget(
            name: "hrbridge",
            dependencies: [
                "GATT", "Samples", "Sensors", "Workouts", "SensorSimulator", "BlueZ", "DBus", "Doctor", "WorkoutStore",
                "WorkoutExport", "WorkoutPlans", "Wire", "BridgeClient", "JSONSupport", "WorkoutRecording", "BridgeOut",
                "LabStreaming", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The service: the daemon with Prometheus as its metrics backend.
        .executableTarget(
            name: "hrbridged",
            dependencies: [
                "Bridge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "GATTTests", dependencies: ["GATT"]),
        .testTarget(name: "ThreadsTests", dependencies: ["Threads"]),
        .testTarget(name: "WireTests", dependencies: ["Wire"]),
        .testTarget(
            name: "BridgeOutTests",
            dependencies: [
                "BridgeOut", "GATT", "Sensors", "BusHarness", "hrbridge",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "MQTTTests", dependencies: ["MQTT", "BusHarness", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "RemoteSensorsTests",
            dependencies: [
                "RemoteSensors", "MQTT", "GATT", "Sensors", "BusHarness",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "WorkoutRecordingTests",
            dependencies: [
                "WorkoutRecording", "WorkoutStore", "WorkoutPlans", "Workouts", "Sensors", "SensorSimulator", "Samples",
                "BusHarness", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "SamplesTests", dependencies: ["Samples", "GATT", "Sensors"]),
        .testTarget(name: "WorkoutsTests", dependencies: ["Workouts", "Samples", "Sensors", "GATT", "BusHarness"]),
        .testTarget(
            name: "SensorSimulatorTests",
            dependencies: ["SensorSimulator", "Sensors", "GATT", "Workouts", "Samples"]
        ),
        // Test-only: a private dbus-daemon, BlueZoo, python-dbusmock and virtual straps, all stopped by PID.
        .target(
            name: "BusHarness",
            dependencies: ["DBus", "Sensors", "GATT", .product(name: "Logging", package: "swift-log")],
            path: "Tests/BusHarness"),
        .testTarget(
            name: "DBusTests",
            dependencies: ["DBus", "BusHarness", "hrbridge", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "BlueZTests",
            dependencies: [
                "BlueZ", "DBus", "Sensors", "GATT", "BusHarness", "hrbridge", "Threads",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "DoctorTests",
            dependencies: ["Doctor", "DBus", "BusHarness", "hrbridge", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "WorkoutStoreTests",
            dependencies: [
                "WorkoutStore", "PostgresStore", "Workouts", "Samples", "Sensors", "BusHarness", "hrbridge",
                "hrbridged", "Wire",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "WorkoutExportTests",
            dependencies: ["WorkoutExport", "WorkoutStore", "Workouts", "Samples", "Sensors", "BusHarness", "hrbridge"]
        ),
        .testTarget(
            name: "WorkoutPlansTests",
            dependencies: ["WorkoutPlans", "Workouts", "Samples", "Sensors", "SensorSimulator"]),
        // Real bluetoothd and the Linux kernel in QEMU, Bumble virtual controllers (Tests/Fixtures/real-bluez).
        .testTarget(name: "RealBlueZTests", dependencies: ["BusHarness", "hrbridge", "hrbridged"]),
        // The Debian package installed and run under systemd in a QEMU guest (Tests/Fixtures/system).
        .testTarget(name: "SystemTests", dependencies: ["BusHarness"]),
        .testTarget(
            name: "hrbridgeTests",
            dependencies: [
                "hrbridge", "BusHarness", "Workouts", "Wire", "JSONSupport", "WorkoutStore", "Samples", "Sensors",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "Bridge", "BridgeClient", "Wire", "BusHarness", "Workouts", "Sensors", "SensorSimulator", "GATT",
                "hrbridge", "hrbridged", "JSONSupport", "Samples", "WorkoutStore", "MQTT", "LabStreaming",
                "RemoteSensors",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ]
)

// Warnings are errors in this package's own targets (SwiftPM does not apply warning settings to
// a package used as a dependency). HRBRIDGE_ALLOW_WARNINGS=1 builds anyway, e.g. with a newer
// compiler that warns about something new.
let warningsAreErrors = Context.environment["HRBRIDGE_ALLOW_WARNINGS"] != "1"

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    if warningsAreErrors { settings.append(.treatAllWarnings(as: .error)) }
    target.swiftSettings = settings
}
