// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Sensorium",
    products: [
        // For embedders: run protocols against a simulated world, a recorded store or one's
        // own data (docs/embedding.md lists the public surface); LuaHost for plain Lua.
        .library(name: "Sensorium", targets: ["Sensorium"]),
        .library(name: "LuaHost", targets: ["LuaHost"]),
        .executable(name: "sensorium", targets: ["SensoriumCLI"]),
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
        // The simulated world: seeded participants' days into samples (a SampleSource).
        .target(name: "Simulator", dependencies: ["SensorKitModel"]),
        // The recorded store: SQLite (GRDB), the column codec, the replay's SampleSource.
        .target(name: "StudyStore", dependencies: ["SensorKitModel", .product(name: "GRDB", package: "GRDB.swift")]),
        // Exports into a store: MyDataHelps, MyHeartCounts and the native format (read and
        // written), compressed inputs, the parallel parse pipelines.
        .target(name: "Importers", dependencies: ["StudyStore", "SensorKitModel", "JSONText", "CIsal", "CZstd",
                                                  .product(name: "GRDB", package: "GRDB.swift")]),
        // What a run produces for people: tables, charts (SVG), the HTML run report.
        .target(name: "StudyReport", dependencies: ["SensorKitModel", "JSONText"]),
        .target(name: "StudyRuntime", dependencies: ["LuaHost", "SensorKitModel", "StudyReport", "JSONText", "CStudyLua"]),
        // The API described: the reference's parser, the live description, completion, LuaLS definitions.
        .target(name: "ApiReference", dependencies: ["LuaHost", "SensorKitModel"]),
        // The wiring: a scenario into a simulated world, a store into a replay, for the runtime.
        .target(name: "StudyWorlds", dependencies: ["StudyRuntime", "StudyReport", "LuaHost", "SensorKitModel", "Simulator", "StudyStore"]),
        // The embedding API: a protocol, a world (simulated, recorded, an embedder's data
        // source) and a configuration in; tables, findings and output out; a protocol checked,
        // participants opened for a prompt, a simulated world exported in the native format.
        .target(name: "Sensorium", dependencies: ["LuaHost", "SensorKitModel", "Simulator", "Importers", "StudyReport", "StudyRuntime",
                                                  "StudyWorlds"]),
        // The command line (`sensorium`) and its benchmarks. Named apart from the `Sensorium`
        // library so that the two folders differ also on a case-insensitive file system.
        .executableTarget(name: "SensoriumCLI", dependencies: [
            "Sensorium", "LuaHost", "SensorKitModel", "Simulator", "StudyStore", "Importers", "StudyReport", "StudyRuntime",
            "ApiReference", "StudyWorlds", "JSONText", "CLua", "CLuaShim", "CEditLine", "CIsal",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "LuaHostTests", dependencies: ["LuaHost"]),
        .testTarget(name: "SensorKitModelTests", dependencies: ["SensorKitModel", "CivilTime"]),
        .testTarget(name: "SimulatorTests", dependencies: ["Simulator", "SensorKitModel"]),
        .testTarget(name: "RecordedDataTests", dependencies: ["StudyStore", "Importers", "Simulator", "SensorKitModel",
                                                          .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "StudyRuntimeTests", dependencies: ["StudyRuntime", "StudyReport", "ApiReference", "StudyWorlds", "LuaHost", "JSONText",
                                                      "SensorKitModel", "Simulator", "StudyStore", "Importers", "CivilTime",
                                                      .product(name: "GRDB", package: "GRDB.swift")]),
        // Runs the built `sensorium` executable (found beside the test bundle).
        // CZlib: the browser test decodes Chromium's PNG screenshots.
        .testTarget(name: "SensoriumCLITests", dependencies: ["CZlib"]),
        .testTarget(name: "SensoriumTests", dependencies: ["Sensorium", "LuaHost"]),
    ],
    swiftLanguageModes: [.v6]
)
