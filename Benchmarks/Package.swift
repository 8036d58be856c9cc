// swift-tools-version: 6.1
import PackageDescription

/// Courier's benchmarks: a separate package so the library's users never build them.
///
/// - `courier-loopback`: throughput and latency against the raw transports and swift-openapi-runtime (over plain
///   HTTP, and with `--protocols` HTTPS and HTTP/2), the scale test and auth under load.
/// - `courier-download`: 1 GiB streamed download and upload through Courier and raw AsyncHTTPClient, and the download
///   through a generated OpenAPI client on Courier and on swift-openapi-async-http-client.
/// - `courier-cache`: cache hit and 304 revalidation latency against a round trip.
/// - `courier-streaming`: Server-Sent Events parsing throughput against swift-openapi-runtime's, and the latency from
///   a server's flush to the event loop on each transport.
/// - `courier-fleet`: CourierPostgres's per-call overhead with a valid token against the in-memory store, and a
///   refresh storm's latency across a fleet of processes against one process. It needs a PostgreSQL, so `run` leaves
///   it out: `scripts/postgres-lab` starts one (see `Sources/courier-fleet/main.swift`).
/// - `CourierMicro` (under `Benchmarks/`): package-benchmark micro benchmarks (`swift package benchmark`).
/// - `run`: all of them but `courier-cache`, writing `RESULTS.md`.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "courier-cache",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "courier-download",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "Courier"),
                .product(name: "CourierURLSession", package: "Courier"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "courier-fleet",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierPostgres", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "courier-loopback",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "Courier"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "CourierURLSession", package: "Courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "courier-streaming",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "CourierURLSession", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "CourierMicro",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Benchmarks/CourierMicro",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
