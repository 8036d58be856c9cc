// swift-tools-version: 6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let applePlatforms: [Platform] = [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .macCatalyst]

/// A dependency only resolved and built where one of `traits` is on. Swift 6.2.0 mishandled trait-conditioned
/// dependencies (swiftlang/swift-package-manager#9141; swift-otel works around it the same way), so with that
/// compiler they are always included; the code still checks the trait.
func traitGated(_ traits: Set<String>) -> TargetDependencyCondition? {
    #if compiler(>=6.2) && compiler(<6.2.1)
        return nil
    #else
        return .when(traits: traits)
    #endif
}

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        // `import Courier`: the core and the transport the traits choose (see `Client(baseURL:)`).
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"]),
        .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .library(name: "CourierObservability", targets: ["CourierObservability"]),
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .library(name: "CourierPostgres", targets: ["CourierPostgres"]),
        .executable(name: "courier-demo", targets: ["courier-demo"]),
    ],
    traits: [
        .trait(
            name: "AsyncHTTPClient",
            description: """
                The AsyncHTTPClient transport (SwiftNIO, BoringSSL) and the default transport on every platform. \
                Servers keep it on; an iOS or macOS app can turn it off to resolve only swift-http-types and swift-log.
                """
        ),
        .trait(
            name: "TestServer",
            description: "CourierTestServer, the embedded HTTP/1.1, HTTP/2 and TLS server for tests (SwiftNIO)."
        ),
        .trait(
            name: "Observability",
            description: "CourierObservability: swift-metrics and swift-distributed-tracing monitors."
        ),
        .trait(
            name: "OpenAPI",
            description: """
                CourierOpenAPI: a swift-openapi-runtime `ClientTransport` that runs generated clients on Courier \
                (swift-openapi-runtime, which needs only swift-http-types).
                """
        ),
        .trait(
            name: "Postgres",
            description: """
                CourierPostgres: a credential store with fleet-wide single-flight refresh and a shared HTTP cache \
                store on PostgreSQL (postgres-nio, swift-crypto), for many server instances calling one API.
                """
        ),
        .default(enabledTraits: ["AsyncHTTPClient", "TestServer", "Observability", "OpenAPI", "Postgres"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Test-only: the generator's build plugin turns Tests/CourierOpenAPITests/openapi.yaml into a client.
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        // Test-only (consumers never resolve it): the real OpenTelemetry SDK for CourierOTelTests, OTLP/HTTP only.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Test-only: Examples/HummingbirdGateway's sources, compiled and run here with Courier and Hummingbird in one
        // module (the example's own package builds the same files for users).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0", traits: []),
    ],
    targets: [
        .target(
            name: "CourierCore",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Courier",
            dependencies: [
                "CourierCore",
                .target(name: "CourierAsyncHTTPClient", condition: .when(traits: ["AsyncHTTPClient"])),
                .target(name: "CourierURLSession", condition: .when(platforms: applePlatforms)),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierTesting",
            dependencies: [
                "CourierCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                "CourierCore",
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: traitGated(["AsyncHTTPClient"])),
                .product(
                    name: "NIOHTTPCompression", package: "swift-nio-extras", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "X509", package: "swift-certificates", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: traitGated(["AsyncHTTPClient"])),
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle",
                    condition: traitGated(["AsyncHTTPClient"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierURLSession",
            dependencies: [
                "CourierCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierObservability",
            dependencies: [
                "CourierCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics", condition: traitGated(["Observability"])),
                .product(
                    name: "Tracing", package: "swift-distributed-tracing", condition: traitGated(["Observability"])),
                .product(
                    name: "Instrumentation", package: "swift-distributed-tracing",
                    condition: traitGated(["Observability"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "CourierCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: traitGated(["OpenAPI"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierPostgres",
            dependencies: [
                "CourierCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: traitGated(["Postgres"])),
                .product(name: "Crypto", package: "swift-crypto", condition: traitGated(["Postgres"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: traitGated(["Postgres"])),
            ],
            exclude: ["Database/schema.sql"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CourierTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio", condition: traitGated(["TestServer"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: traitGated(["TestServer"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: traitGated(["TestServer"])),
                .product(
                    name: "NIOHTTPCompression", package: "swift-nio-extras", condition: traitGated(["TestServer"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: traitGated(["TestServer"])),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: traitGated(["TestServer"])),
                .product(name: "X509", package: "swift-certificates", condition: traitGated(["TestServer"])),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: traitGated(["TestServer"])),
                .product(name: "Crypto", package: "swift-crypto", condition: traitGated(["TestServer"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "courier-demo",
            dependencies: [
                "Courier",
                "CourierAsyncHTTPClient",
                "CourierURLSession",
                "CourierTesting",
                "CourierTestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTestServerTests",
            dependencies: [
                "CourierTestServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierURLSessionTests",
            dependencies: [
                "Courier",
                "CourierURLSession",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierConformanceTests",
            dependencies: [
                "Courier",
                "CourierAsyncHTTPClient",
                "CourierURLSession",
                "CourierTestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierObservabilityTests",
            dependencies: [
                "Courier",
                "CourierObservability",
                "CourierTesting",
                "CourierAsyncHTTPClient",
                "CourierTestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: [
                "Courier",
                "CourierAsyncHTTPClient",
                "CourierURLSession",
                "CourierCore",
                "CourierObservability",
                "CourierOpenAPI",
                "CourierTestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .testTarget(
            name: "CourierOTelTests",
            dependencies: [
                "Courier",
                "CourierObservability",
                "CourierAsyncHTTPClient",
                "CourierTestServer",
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HummingbirdGatewayTests",
            dependencies: [
                "Courier",
                "CourierTestServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Examples/HummingbirdGateway",
            exclude: ["Package.swift", "Sources/gateway"],
            sources: ["Sources/Gateway", "Tests/GatewayTests"],
            swiftSettings: [.swiftLanguageMode(.v6)]  // as the example's own package builds them
        ),
        .executableTarget(
            name: "courier-fleet-worker",
            dependencies: [
                "Courier",
                "CourierCore",
                "CourierPostgres",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: traitGated(["Postgres"])),
                .product(name: "Crypto", package: "swift-crypto", condition: traitGated(["Postgres"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierPostgresTests",
            dependencies: [
                "Courier",
                "CourierCore",
                "CourierPostgres",
                "CourierTesting",
                "CourierTestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier",
                "CourierCore",
                "CourierTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
