#!/usr/bin/env python3
"""Lays out the C# binding's packages from built files (`make csharp-nuget`,
`make csharp-upm`): a NuGet package's tree (packed into a .nupkg by `zip`)
and a Unity (UPM) package's tree (packed into a .tgz by `tar`).

The natives come as RID:PATH pairs (`--native linux-x64:target/release/libcapstan.so`),
one per file, from the make variable CSHARP_NATIVES: `make lib`'s library and
whatever dist/native/<rid>/ holds. A RID this script has no Unity folder for
is refused, naming it, rather than laid out where Unity would not find it.
"""
import argparse
import hashlib
import os
import shutil
import sys

# RID -> (Unity plugin folder under Runtime/Plugins, PluginImporter platform settings).
# Folder names follow Unity's conventions; the .meta files say which player
# and editor load each library (Unity would otherwise load every one of them
# everywhere).
UNITY = {
    "linux-x64": ("Linux/x86_64", [("Standalone", "Linux64"), ("Editor", "Linux")]),
    "win-x64": ("Windows/x86_64", [("Standalone", "Win64"), ("Editor", "Windows")]),
    "win-x86": ("Windows/x86", [("Standalone", "Win")]),
    "osx-arm64": ("macOS/arm64", [("Standalone", "OSXUniversal"), ("Editor", "OSX")]),
    "osx-x64": ("macOS/x86_64", [("Standalone", "OSXUniversal"), ("Editor", "OSX")]),
    "ios-arm64": ("iOS", [("iPhone", "iOS")]),
    "android-arm64": ("Android/arm64-v8a", [("Android", "Android")]),
    "android-arm": ("Android/armeabi-v7a", [("Android", "Android")]),
    "android-x64": ("Android/x86_64", [("Android", "Android")]),
}

# Platforms `make dist` builds that no Unity player runs on (Unity's Linux
# player is x86-64 only): the NuGet package carries them, the UPM one not.
NOT_UNITY = {"linux-arm64", "linux-x86"}


def guid(path):
    # Stable across builds, so a project that took the package once sees no churn.
    return hashlib.md5(("capstan:" + path).encode()).hexdigest()


def plugin_meta(rel, platforms, cpu=None):
    lines = [
        "fileFormatVersion: 2",
        "guid: " + guid(rel),
        "PluginImporter:",
        "  externalObjects: {}",
        "  serializedVersion: 2",
        "  iconMap: {}",
        "  executionOrder: {}",
        "  defineConstraints: []",
        "  isPreloaded: 0",
        "  isOverridable: 0",
        "  isExplicitlyReferenced: 0",
        "  validateReferences: 1",
        "  platformData:",
        "  - first:",
        "      Any: ",
        "    second:",
        "      enabled: 0",
        "      settings: {}",
    ]
    for kind, name in platforms:
        lines += [
            "  - first:",
            "      %s: %s" % (kind, name),
            "    second:",
            "      enabled: 1",
            "      settings:",
        ]
        if cpu:
            lines.append("        CPU: " + cpu)
        else:
            lines.append("        CPU: AnyCPU")
    lines += ["  userData: ", "  assetBundleName: ", "  assetBundleVariant: ", ""]
    return "\n".join(lines)


def folder_meta(rel):
    return "fileFormatVersion: 2\nguid: %s\nfolderAsset: yes\nDefaultImporter:\n  externalObjects: {}\n  userData: \n" % guid(rel)


def text_meta(rel):
    return "fileFormatVersion: 2\nguid: %s\nTextScriptImporter:\n  externalObjects: {}\n  userData: \n" % guid(rel)


def copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)


def natives(pairs):
    out = []
    for p in pairs:
        rid, sep, path = p.partition(":")
        if not sep or not rid or not path:
            sys.exit("layout.py: --native takes RID:PATH, got %r" % p)
        if not os.path.isfile(path):
            sys.exit("layout.py: the native for %s is not a file: %s" % (rid, path))
        out.append((rid, path))
    return out


def nuget(a):
    root = a.out
    with open(a.nuspec) as f:
        spec = f.read().replace("@VERSION@", a.version)
    with open(os.path.join(root, "Capstan.nuspec"), "w") as f:
        f.write(spec)
    copy(a.dll, os.path.join(root, "lib", "netstandard2.1", "Capstan.dll"))
    exts = {"dll", "nuspec", "rels"}
    for rid, path in natives(a.native):
        copy(path, os.path.join(root, "runtimes", rid, "native", os.path.basename(path)))
        ext = os.path.basename(path).rpartition(".")[2]
        if ext:
            exts.add(ext)
    # The Open Packaging Conventions parts `nuget pack` writes beside the nuspec.
    os.makedirs(os.path.join(root, "_rels"), exist_ok=True)
    with open(os.path.join(root, "_rels", ".rels"), "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n'
                '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                '<Relationship Type="http://schemas.microsoft.com/packaging/2010/07/manifest" Target="/Capstan.nuspec" Id="R0" />'
                '</Relationships>\n')
    with open(os.path.join(root, "[Content_Types].xml"), "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n'
                '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
                "".join('<Default Extension="%s" ContentType="application/octet" />' % e for e in sorted(exts)) +
                "</Types>\n")


def upm(a):
    root = a.out
    with open(a.package_json) as f:
        pj = f.read().replace("@VERSION@", a.version)
    files = {}  # rel -> meta text
    with open(os.path.join(root, "package.json"), "w") as f:
        f.write(pj)
    files["package.json"] = text_meta("package.json")
    copy(a.link_xml, os.path.join(root, "Runtime", "link.xml"))
    files["Runtime/link.xml"] = text_meta("Runtime/link.xml")
    copy(a.readme, os.path.join(root, "README.md"))
    files["README.md"] = text_meta("README.md")
    # The managed assembly twice: DllImport("capstan") for every player and
    # the editor, DllImport("__Internal") (built with CAPSTAN_STATIC) for iOS,
    # which links plugins statically. Each .meta enables one of them.
    copy(a.dll, os.path.join(root, "Runtime", "Capstan.dll"))
    files["Runtime/Capstan.dll"] = plugin_meta("Runtime/Capstan.dll", [
        ("Editor", "Editor"), ("Standalone", "Linux64"), ("Standalone", "Win64"), ("Standalone", "Win"),
        ("Standalone", "OSXUniversal"), ("Android", "Android")])
    copy(a.ios_dll, os.path.join(root, "Runtime", "iOS", "Capstan.dll"))
    files["Runtime/iOS/Capstan.dll"] = plugin_meta("Runtime/iOS/Capstan.dll", [("iPhone", "iOS")])
    for rid, path in natives(a.native):
        if rid in NOT_UNITY:
            # `make dist` builds them for NuGet; Unity has no player for them.
            print("layout.py: upm: %s left out (Unity builds no player for it)" % rid)
            continue
        if rid not in UNITY:
            sys.exit("layout.py: no Unity plugin folder for RID %s (known: %s)" % (rid, ", ".join(sorted(UNITY))))
        folder, platforms = UNITY[rid]
        rel = "Runtime/Plugins/%s/%s" % (folder, os.path.basename(path))
        copy(path, os.path.join(root, rel))
        cpu = {"x86_64": "x86_64", "arm64": "ARM64", "arm64-v8a": "ARM64", "armeabi-v7a": "ARMv7", "x86": "x86"}.get(folder.rpartition("/")[2])
        files[rel] = plugin_meta(rel, platforms, cpu)
    # Unity wants a .meta beside every file and folder of a package.
    for rel in list(files):
        d = os.path.dirname(rel)
        while d:
            files.setdefault(d, folder_meta(d))
            d = os.path.dirname(d)
    for rel, meta in files.items():
        with open(os.path.join(root, rel + ".meta"), "w") as f:
            f.write(meta)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["nuget", "upm"])
    p.add_argument("--out", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--dll", required=True)
    p.add_argument("--ios-dll")
    p.add_argument("--nuspec")
    p.add_argument("--package-json")
    p.add_argument("--link-xml")
    p.add_argument("--readme")
    p.add_argument("--native", action="append", default=[])
    a = p.parse_args()
    if not a.version:
        sys.exit("layout.py: no version (CSHARP_VERSION is empty: is Cargo.toml's [package] version readable?)")
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    nuget(a) if a.kind == "nuget" else upm(a)


if __name__ == "__main__":
    main()
