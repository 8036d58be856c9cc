// swift-tools-version: 6.2
import PackageDescription

/// An app's networking on Courier with the package's server traits off: no AsyncHTTPClient, SwiftNIO or BoringSSL,
/// only Courier, swift-http-types and swift-log. `scripts/test` builds and tests it, and prints what it resolves.
let package = Package(
    name: "AppClient",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    dependencies: [
        // In an app: .package(url: "https://github.com/courier-swift/courier.git", from: "0.1.0", traits: [])
        .package(name: "Courier", path: "../..", traits: [])
    ],
    targets: [
        .target(
            name: "AppClient",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierURLSession", package: "Courier"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "AppClientTests",
            dependencies: [
                "AppClient",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
