// swift-tools-version:6.0
// A program that embeds Sensorium: its own data (heart_rate.csv), its own Lua function and class,
// and a protocol that uses both. `make test` builds and runs it and compares its output
// with expected-output.txt.
import PackageDescription

let package = Package(
    name: "Embedding",
    dependencies: [.package(name: "Sensorium", path: "../..")],
    targets: [
        .executableTarget(name: "Embedding", dependencies: [.product(name: "Sensorium", package: "Sensorium"),
                                                            .product(name: "LuaHost", package: "Sensorium")]),
    ],
    swiftLanguageModes: [.v6]
)
