// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Sensorium",
    products: [
        // For embedders: run protocols against a simulated world, a recorded store or one's
        // own data (docs/embedding.md lists the public surface); LuaHost for plain Lua.
        .library(name: "Sensorium", targets: ["Sensorium"]),
        .library(name: "LuaHost", targets: ["LuaHost"]),
        .executable(name: "sensorium", targets: ["sensorium"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Debian's liblua5.4-dev, found through pkg-config (the C build, never lua5.4-c++).
        .systemLibrary(name: "CLua", pkgConfig: "lua5.4", providers: [.apt(["liblua5.4-dev"])]),
        // Debian's libedit-dev: the line editor behind `sensorium repl`.
        .systemLibrary(name: "CEditLine", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
        // zlib (Debian's zlib1g-dev): the browser test decodes Chromium's PNG screenshots.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Intel ISA-L (Debian's libisal-dev): inflating gzip-compressed exports, several times zlib's speed.
        .systemLibrary(name: "CIsal", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        // Zstandard (Debian's libzstd-dev): MyHeartCounts uploads are zstd-compressed (.csv.zstd, .json.zstd).
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // Everything that may longjmp lives here: trampolines, hooks, allocator, protected helpers.
        // Its Lua (lua/*.lua) is embedded at build time with #embed.
        .target(name: "CLuaShim", dependencies: ["CLua"], exclude: ["lua"]),
        .target(name: "LuaHost", dependencies: ["CLua", "CLuaShim", "CivilTime"]),
        // The study runtime's own Lua (lua/runtime.lua, the prelude), embedded at build time with #embed.
        .target(name: "CStudyLua", exclude: ["lua"]),
        // Gregorian civil-day arithmetic, shared by the calendar service and os.date; a leaf.
        .target(name: "CivilTime"),
        .target(name: "SensorKitModel", dependencies: ["CivilTime"]),
        // JSON string literals for every writer; a leaf (no dependencies).
        .target(name: "JSONText"),
        .target(name: "SensorBackends", dependencies: ["SensorKitModel", "JSONText", "CIsal", "CZstd", .product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "StudyRuntime", dependencies: ["LuaHost", "SensorKitModel", "JSONText", "CStudyLua"]),
        // The wiring: a scenario into a simulated world, a store into a replay, for the runtime.
        .target(name: "StudyWorlds", dependencies: ["StudyRuntime", "LuaHost", "SensorKitModel", "SensorBackends"]),
        // The embedding API: a protocol, a world (simulated, recorded, an embedder's data
        // source) and a configuration in; tables, findings and output out.
        .target(name: "Sensorium", dependencies: ["LuaHost", "SensorKitModel", "StudyRuntime", "StudyWorlds"]),
        .executableTarget(name: "sensorium", dependencies: [
            "Sensorium", "LuaHost", "SensorKitModel", "SensorBackends", "StudyRuntime", "StudyWorlds", "JSONText", "CLua", "CLuaShim", "CEditLine",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "LuaHostTests", dependencies: ["LuaHost"]),
        .testTarget(name: "SensorKitModelTests", dependencies: ["SensorKitModel"]),
        .testTarget(name: "SensorBackendsTests", dependencies: ["SensorBackends", "SensorKitModel", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "StudyRuntimeTests", dependencies: ["StudyRuntime", "StudyWorlds", "LuaHost", "SensorKitModel", "SensorBackends", "CivilTime",
                                                      .product(name: "GRDB", package: "GRDB.swift")]),
        // Runs the built `sensorium` executable (found beside the test bundle).
        // CZlib: the browser test decodes Chromium's PNG screenshots.
        .testTarget(name: "SensoriumCLITests", dependencies: ["CZlib"]),
        .testTarget(name: "SensoriumTests", dependencies: ["Sensorium", "LuaHost"]),
    ],
    swiftLanguageModes: [.v6]
)
