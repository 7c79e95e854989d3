#!/usr/bin/env python3
"""Checks the C# binding's packages (`make csharp-package-test`, part of
`make csharp-test`): what each must hold, and nothing else; that the files
inside are the ones built; and that each package works as laid out (the
smoke program run with the Capstan.dll and the linux-x64 library taken out
of it). Exits non-zero naming every problem found."""
import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layout import NOT_UNITY, UNITY  # noqa: E402

problems = []


def need(ok, what):
    if not ok:
        problems.append(what)
    return ok


def read(path):
    with open(path, "rb") as f:
        return f.read()


def natives(pairs):
    return [tuple(p.split(":", 1)) for p in pairs]


def smoke(kind, dll_bytes, native_dir_files, smoke_exe, mono):
    """Runs the smoke program with the package's dll and linux-x64 library."""
    d = tempfile.mkdtemp(prefix="capstan-%s-" % kind)
    try:
        with open(os.path.join(d, "Capstan.dll"), "wb") as f:
            f.write(dll_bytes)
        shutil.copyfile(smoke_exe, os.path.join(d, "PackageSmoke.exe"))
        nd = os.path.join(d, "native")
        os.makedirs(nd)
        for name, data in native_dir_files.items():
            with open(os.path.join(nd, name), "wb") as f:
                f.write(data)
        env = dict(os.environ, LD_LIBRARY_PATH=nd)
        p = subprocess.run([mono, "PackageSmoke.exe"], cwd=d, env=env, capture_output=True, text=True, timeout=120)
        need(p.returncode == 0 and "package smoke: 5" in p.stdout,
             "%s: the package's Capstan.dll and linux-x64 library did not run a call: %s%s" % (kind, p.stdout, p.stderr))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check_nuget(a, nats):
    z = zipfile.ZipFile(a.nupkg)
    names = set(i.filename for i in z.infolist() if not i.filename.endswith("/"))
    want = {"Capstan.nuspec", "[Content_Types].xml", "_rels/.rels", "lib/netstandard2.1/Capstan.dll"}
    want |= {"runtimes/%s/native/%s" % (rid, os.path.basename(p)) for rid, p in nats}
    need(names == want, "nupkg: holds %s, should hold %s" % (sorted(names - want), sorted(want - names)) if names != want else "")
    ns = {"n": "http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd"}
    spec = ET.fromstring(z.read("Capstan.nuspec"))
    md = spec.find("n:metadata", ns)
    need(md is not None, "nuspec: no metadata in the 2013/05 nuspec namespace")
    if md is not None:
        need(md.findtext("n:id", namespaces=ns) == "Capstan", "nuspec: id is not Capstan")
        need(md.findtext("n:version", namespaces=ns) == a.version, "nuspec: version is not " + a.version)
        lic = md.find("n:license", ns)
        need(lic is not None and lic.get("type") == "expression" and lic.text == "MIT", "nuspec: license is not the MIT expression")
        groups = [g.get("targetFramework") for g in md.iterfind("n:dependencies/n:group", ns)]
        need(groups == [".NETStandard2.1"], "nuspec: dependency groups are %s, not [.NETStandard2.1]" % groups)
    ct = ET.fromstring(z.read("[Content_Types].xml"))
    exts = {d.get("Extension") for d in ct}
    for n in names:
        base = n.rsplit("/", 1)[-1]
        if "." in base and not base.startswith("[") and base != ".rels":
            need(base.rsplit(".", 1)[1] in exts, "[Content_Types].xml: no type for ." + base.rsplit(".", 1)[1])
    rels = ET.fromstring(z.read("_rels/.rels"))
    need(any(r.get("Target") == "/Capstan.nuspec" for r in rels), "_rels/.rels: does not name the nuspec")
    need(z.read("lib/netstandard2.1/Capstan.dll") == read(a.dll), "nupkg: lib/netstandard2.1/Capstan.dll is not the one built")
    for rid, p in nats:
        need(z.read("runtimes/%s/native/%s" % (rid, os.path.basename(p))) == read(p), "nupkg: the %s native is not %s" % (rid, p))
    linux = {n.rsplit("/", 1)[-1]: z.read(n) for n in names if n.startswith("runtimes/linux-x64/native/")}
    if need(bool(linux), "nupkg: no runtimes/linux-x64/native/ (make lib's library)"):
        smoke("nupkg", z.read("lib/netstandard2.1/Capstan.dll"), linux, a.smoke, a.mono)


def check_upm(a, nats):
    t = tarfile.open(a.upm)
    members = {m.name: m for m in t.getmembers() if m.isfile()}
    need(all(n.startswith("package/") for n in members), "upm: entries outside package/ (Unity's tarball layout)")
    names = {n[len("package/"):] for n in members}
    files = {"package.json", "README.md", "Runtime/link.xml", "Runtime/Capstan.dll", "Runtime/iOS/Capstan.dll"}
    for rid, p in nats:
        if rid in NOT_UNITY:  # left out on purpose (no Unity player runs there): `names == want` below
            continue
        need(rid in UNITY, "upm: no Unity folder for " + rid)
        if rid in UNITY:
            files.add("Runtime/Plugins/%s/%s" % (UNITY[rid][0], os.path.basename(p)))
    folders = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            folders.add(d)
            d = os.path.dirname(d)
    want = files | {f + ".meta" for f in files | folders}
    need(names == want, "upm: extra %s, missing %s" % (sorted(names - want), sorted(want - names)))

    def get(n):
        return t.extractfile(members["package/" + n]).read()

    pj = json.loads(get("package.json"))
    need(pj.get("name") == "io.github.capstan-rt.capstan" and pj.get("version") == a.version and "unity" in pj,
         "package.json: name, version or unity missing: %s" % pj)
    link = ET.fromstring(get("Runtime/link.xml"))
    need(any(x.get("fullname") == "Capstan" and x.get("preserve") == "all" for x in link.iter("assembly")),
         "link.xml: Capstan is not preserved")
    guids = {}
    for n in names:
        if n.endswith(".meta"):
            for line in get(n).decode().splitlines():
                if line.startswith("guid: "):
                    g = line[6:]
                    need(g not in guids, "meta: %s and %s share a guid" % (n, guids.get(g)))
                    guids[g] = n
    for n in names:
        if n.endswith(".meta"):
            need(any(v == n for v in guids.values()), "meta: %s has no guid" % n)
    main, ios = get("Runtime/Capstan.dll"), get("Runtime/iOS/Capstan.dll")
    need(main == read(a.dll), "upm: Runtime/Capstan.dll is not the one built")
    need(ios == read(a.ios_dll), "upm: Runtime/iOS/Capstan.dll is not the iOS build")
    # DllImport's module name sits in the assembly's string heap: "__Internal" only in the iOS build.
    need(b"__Internal" in ios and b"__Internal" not in main, "upm: the iOS assembly must import __Internal, the other capstan")
    ios_meta, main_meta = get("Runtime/iOS/Capstan.dll.meta").decode(), get("Runtime/Capstan.dll.meta").decode()
    need("iPhone: iOS" in ios_meta and "iPhone" not in main_meta, "upm: the .meta files must enable the iOS assembly for iOS only")
    for rid, p in nats:
        if rid in UNITY:
            rel = "Runtime/Plugins/%s/%s" % (UNITY[rid][0], os.path.basename(p))
            meta = get(rel + ".meta").decode()
            for kind, plat in UNITY[rid][1]:
                need("%s: %s" % (kind, plat) in meta, "upm: %s.meta does not enable %s %s" % (rel, kind, plat))
            need(get(rel) == read(p), "upm: %s is not %s" % (rel, p))
    linux = {n.rsplit("/", 1)[-1]: get(n) for n in names
             if n.startswith("Runtime/Plugins/Linux/x86_64/") and not n.endswith(".meta")}
    if need(bool(linux), "upm: no Runtime/Plugins/Linux/x86_64/ (make lib's library)"):
        smoke("upm", main, linux, a.smoke, a.mono)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nupkg", required=True)
    p.add_argument("--upm", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--dll", required=True)
    p.add_argument("--ios-dll", required=True)
    p.add_argument("--smoke", required=True)
    p.add_argument("--mono", default="mono")
    p.add_argument("--native", action="append", default=[])
    a = p.parse_args()
    nats = natives(a.native)
    check_nuget(a, nats)
    check_upm(a, nats)
    problems[:] = [x for x in problems if x]
    for x in problems:
        print("csharp-package-test: " + x)
    if problems:
        sys.exit(1)
    print("csharp-package-test: the NuGet and Unity packages hold what they must (%d natives: %s) and run a call"
          % (len(nats), ", ".join(r for r, _ in nats)))


if __name__ == "__main__":
    main()
