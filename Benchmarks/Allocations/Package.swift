// swift-tools-version: 6.2
import PackageDescription

/// The allocation check (issue #17): mallocs per call through Courier's whole pipeline on a transport that does
/// nothing, counted by ordo-one's malloc interposer, against the budget committed in `budget.tsv`. CI builds it in
/// release with Courier's traits off (only swift-http-types and swift-log besides, so the build is short) and fails
/// when a count grows past its budget. Counts, not timings: they are the same on every run of the same binary.
///
///     swift run -c release --package-path Benchmarks/Allocations courier-allocations
let package = Package(
    name: "CourierAllocations",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Courier", path: "../..", traits: []),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        .executableTarget(
            name: "courier-allocations",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
