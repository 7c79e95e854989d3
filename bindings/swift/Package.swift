// swift-tools-version:5.9
// capstan for Swift: a C module over the header and a thin Swift layer on
// top. The C module is, by default, a system library found and linked
// through pkg-config (`pkg-config --cflags --libs capstan`); with
// CAPSTAN_XCFRAMEWORK=1 in the environment it is the binary
// Capstan.xcframework in this directory instead (`make xcframework` on macOS
// writes it: macOS, iOS and the iOS simulator, static). Not built in
// capstan's CI (no Swift toolchain or Apple SDK there); see the README's
// "Swift" and "Platforms" sections.
import Foundation
import PackageDescription

let useXCFramework = ProcessInfo.processInfo.environment["CAPSTAN_XCFRAMEWORK"] == "1"
let cModule: Target = useXCFramework
    ? .binaryTarget(name: "CCapstan", path: "Capstan.xcframework")
    : .systemLibrary(name: "CCapstan", path: "Sources/CCapstan", pkgConfig: "capstan")

let package = Package(
    name: "Capstan",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "Capstan", targets: ["Capstan"]),
    ],
    targets: [
        cModule,
        .target(name: "Capstan", dependencies: ["CCapstan"]),
        .testTarget(name: "CapstanTests", dependencies: ["Capstan", "CCapstan"]),
    ]
)
