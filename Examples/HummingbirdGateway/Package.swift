// swift-tools-version: 6.2
import PackageDescription

/// A Hummingbird server whose route calls an upstream API through Courier (service token, cache, retry), with
/// Courier's default traits. `scripts/test` builds and tests it: it is also the proof that Courier and Hummingbird
/// names (`Request`, `Environment` …) coexist in one file.
let package = Package(
    name: "HummingbirdGateway",
    platforms: [.macOS(.v15)],  // its tests use Synchronization.Mutex
    dependencies: [
        // In a server: .package(url: "https://github.com/courier-swift/courier.git", from: "0.1.0")
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0", traits: []),
    ],
    targets: [
        .target(
            name: "Gateway",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "gateway",
            dependencies: ["Gateway", .product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
