// swift-tools-version:5.9
// capstan for Swift: a system-library target over the C header (found and
// linked through pkg-config: `pkg-config --cflags --libs capstan`) and a thin
// Swift layer on top. Not built in capstan's CI (no Swift toolchain there);
// see the README's "Swift" section.
import PackageDescription

let package = Package(
    name: "Capstan",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "Capstan", targets: ["Capstan"]),
    ],
    targets: [
        .systemLibrary(name: "CCapstan", path: "Sources/CCapstan", pkgConfig: "capstan"),
        .target(name: "Capstan", dependencies: ["CCapstan"]),
        .testTarget(name: "CapstanTests", dependencies: ["Capstan", "CCapstan"]),
    ]
)
