// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so the main build and `make test` never compile them.
let package = Package(
    name: "hrbridge-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "hrbridge", path: "..")],
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
    ]
)
