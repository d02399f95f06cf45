// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so the main build and `make test` never compile them.
let package = Package(
    name: "hrbridge-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "hrbridge", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "DecodeBenchmark",
            dependencies: [.product(name: "GATT", package: "hrbridge")],
            swiftSettings: [.unsafeFlags(["-Ounchecked"]), .enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "BuilderBenchmark",
            dependencies: [
                .product(name: "Workouts", package: "hrbridge"), .product(name: "Samples", package: "hrbridge"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "OSCBeatBenchmark",
            dependencies: [
                .product(name: "BridgeOut", package: "hrbridge"), .product(name: "GATT", package: "hrbridge"),
                .product(name: "Sensors", package: "hrbridge"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "HRVBenchmark",
            dependencies: [.product(name: "Workouts", package: "hrbridge")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "StoreBenchmark",
            dependencies: [
                .product(name: "WorkoutStore", package: "hrbridge"), .product(name: "Samples", package: "hrbridge"),
                .product(name: "Sensors", package: "hrbridge"), .product(name: "PostgresStore", package: "hrbridge"),
                .product(name: "Workouts", package: "hrbridge"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "NotifyConsumer",
            dependencies: [
                .product(name: "BlueZ", package: "hrbridge"), .product(name: "DBus", package: "hrbridge"),
                .product(name: "GATT", package: "hrbridge"), .product(name: "Sensors", package: "hrbridge"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            // The producer (a BlueZ imitation) and the self-contained runner; the consumer is NotifyConsumer.
            name: "NotifyBenchmark",
            dependencies: [
                .product(name: "DBus", package: "hrbridge"), .product(name: "GATT", package: "hrbridge"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
