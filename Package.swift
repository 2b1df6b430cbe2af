// swift-tools-version:6.1
import PackageDescription

// Dependency direction (docs/architecture.md): cartograph -> CartographHTTP -> CartographStore -> CartographMapping
// -> CartographPredicate -> CartographCore; each module may import any module after it in that order, never one before.
// Each C library is imported by one module, but zlib: CSQLite by CartographStore, CMicroHTTPD by CartographHTTP, CZlib by
// CartographHTTP (gzip answers) and CartographStore (the archive's deflated bodies, R-P18).
let package = Package(
    name: "Cartograph",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cartograph", targets: ["cartograph"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // Test-only (CartographClientTests, R-S7): the runtime and a transport for the client that
        // swift-openapi-generator generated from openapi.yaml. The generated code is committed
        // (scripts/generate-client.sh), so the generator itself (OpenAPIKit, Yams: about 8 minutes)
        // is never built here. No product of the server links them; URLSession comes from
        // FoundationNetworking on Linux. Cost: a clean `swift build --build-tests` took 535 s instead
        // of 487 s on 2 busy cores (these three packages about 30 s of CPU, the generated client 15 s).
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // gzip for responses a client accepts compressed (R-Q4 lists are 100s of KB of JSON).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Pure Swift, no I/O: JSON, errors, names, API documents.
        .target(name: "CartographCore"),
        // Pure Swift, no I/O: the NSPredicate format language (parse, type-check, evaluate, compile to SQL).
        .target(name: "CartographPredicate", dependencies: ["CartographCore"]),
        .target(name: "CartographMapping", dependencies: ["CartographCore", "CartographPredicate"]),
        // The hostile-input properties: scripts/fuzz.sh compiles them with libFuzzer (Fuzz/), the
        // replay test runs them uninstrumented on the checked-in corpora (docs/fuzzing.md).
        .target(name: "CartographFuzzing", dependencies: ["CartographCore", "CartographPredicate", "CartographMapping"]),
        // Everything that speaks SQL.
        .target(
            name: "CartographStore",
            dependencies: [
                "CSQLite", "CZlib", "CartographCore", "CartographPredicate", "CartographMapping",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Everything that speaks HTTP.
        .target(
            name: "CartographHTTP",
            dependencies: [
                "CMicroHTTPD", "CZlib", "CartographCore", "CartographStore", "CartographMapping",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                // HMAC-SHA256 for webhook signatures (R-W2); CartographStore links it already.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Built into the binary: the spec it serves, and the browser console's files (docs/console.md).
            resources: [
                .embedInCode("openapi.yaml"),
                .embedInCode("Console/console.html"), .embedInCode("Console/console.css"), .embedInCode("Console/console.js"),
                .embedInCode("Console/yaml.js"), .embedInCode("Console/favicon.svg"),
            ]
        ),
        .executableTarget(
            name: "cartograph",
            dependencies: [
                "CartographCore", "CartographStore", "CartographHTTP", "CartographMapping",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Benchmarks that need no server: `make bench` runs it in release mode.
        .executableTarget(
            name: "cartograph-bench",
            dependencies: ["CartographCore", "CartographPredicate", "CartographTesting"],
            path: "bench/swift/cartograph-bench"
        ),
        .executableTarget(name: "cartograph-store-loader", dependencies: ["CartographCore", "CartographStore", "CartographHTTP"],
                         path: "bench/swift/store-bench-loader"),
        // Test support: a live-server harness and a raw HTTP/1.1 client.
        .target(name: "CartographTesting", dependencies: ["CartographCore"]),
        .testTarget(name: "CartographCoreTests", dependencies: ["CartographCore", "CartographTesting"], exclude: ["Fixtures"]),
        .testTarget(name: "CartographPredicateTests", dependencies: ["CartographPredicate", "CartographStore", "CartographCore", "CartographTesting"]),
        // The mapping engine's ports (RestKit's tests) run against a model store: its JSON fixtures are read from Fixtures/.
        // CartographHTTP: the store's reads are checked in the documents its renderer writes.
        .testTarget(name: "CartographStoreTests", dependencies: ["CartographStore", "CartographCore", "CartographMapping", "CartographTesting",
                                                                 "CartographHTTP"],
                    exclude: ["Fixtures"]),
        .testTarget(
            name: "CartographHTTPTests",
            dependencies: [
                "CartographHTTP", "CartographStore", "CartographCore", "CartographTesting", "cartograph",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "CartographMappingTests", dependencies: ["CartographMapping", "CartographCore", "CartographPredicate", "CartographFuzzing"]),
        // R-S7: the client generated from openapi.yaml (Generated/, committed) against the live server.
        .testTarget(
            name: "CartographClientTests",
            dependencies: [
                "CartographTesting", "cartograph",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["Generated/openapi-generator-config.yaml"]
        ),
        .testTarget(name: "CartographFuzzingTests", dependencies: ["CartographFuzzing"]),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
