// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "hrbridge",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "Samples", targets: ["Samples"]),
        .executable(name: "hrbridge", targets: ["hrbridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        // Pure frame decoders/encoders, UUIDs and stateful derivers. Foundation-free.
        .target(name: "GATT"),
        // Quantity types, units, samples, and the turn of decoded frames into samples.
        .target(name: "Samples", dependencies: ["GATT"]),
        // The command line: thin commands over the modules.
        .executableTarget(
            name: "hrbridge",
            dependencies: [
                "GATT", "Samples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "GATTTests", dependencies: ["GATT"]),
        .testTarget(name: "SamplesTests", dependencies: ["Samples", "GATT"]),
        .testTarget(name: "hrbridgeTests", dependencies: ["hrbridge"]),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
