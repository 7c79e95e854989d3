#!/usr/bin/env python3
"""Runs every code block of README.md and docs/*.md (`make docs-test`).

Each fenced block is one of:

- a program in a runnable language (info string `c`, `cpp`, `python`, `js`,
  `go`, `java`, `csharp`): compiled and run against include/ and the
  library of target/release; it must exit 0. A block right after it with
  the info string `output` is what it prints: stdout must match it line by
  line (trailing spaces ignored; `...` in a line stands for any text);
- marked by an HTML comment on the lines just before its fence,
  `<!-- docs-test: KIND: why -->`, the reason required:
  - `compile`: compiled, not run (C, C++, Go, Java, C#; Python and JS are
    syntax-checked), for a program that needs what a test has not (a
    server, an API key, a user);
  - `fragment`: C and C++ statements, compiled wrapped in a function
    `void docs_fragment(capstan_registry *reg)` after capstan.h and the
    C (or C++) standard headers; Python syntax-checked; others not compiled;
  - `skip`: not compiled at all (a shell command, an output sample, CMake,
    Swift: there is no Swift toolchain here);
- anything else is refused, naming the file and line: no example escapes.

Every relative link and `#anchor` of those files must resolve too (a file
or folder that exists; a heading of the target file, GitHub's way).

    docs_test.py [--self-test] [--only FILE] [FILE...]

Environment: CAPSTAN_LIB (the library), PYTHON (build/venv's), GO, JAVA_HOME
(a JDK >= 22) and JAVA_CP (the Java binding's classes and dependencies),
MCS/MONO and CSHARP_DLL (Capstan.dll), CC, CXX. A language whose tool is
missing fails the run, saying which.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNABLE = {"c", "cpp", "python", "js", "go", "java", "csharp"}
KINDS = {"compile", "fragment", "skip"}
DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*([a-z]+)\s*(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
TIMEOUT = 120  # a program of the docs runs in well under a second; a hang fails, named


class Block:
    def __init__(self, path, line, info, text, kind, reason):
        self.path, self.line, self.info, self.text = path, line, info, text
        self.kind, self.reason = kind, reason
        self.lang = info.split()[0] if info.split() else ""
        self.expected = None  # the `output` block after it

    def where(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line}"


def blocks_of(path, text):
    """The fenced blocks of one Markdown file, and the problems of their marking."""
    lines = text.split("\n")
    found, problems = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        start = i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i >= len(lines):
            problems.append(f"{os.path.relpath(path, ROOT)}:{start + 1}: a code block that is never closed")
            break
        i += 1
        # The directive: on the HTML-comment or blank lines just above the fence.
        kind = reason = None
        j = start - 1
        while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("<!--")) and start - j <= 4:
            d = DIRECTIVE.match(lines[j])
            if d:
                kind, reason = d.group(1), (d.group(2) or "").strip()
                break
            j -= 1
        b = Block(path, start + 1, info, "\n".join(body) + "\n", kind, reason)
        where = b.where()
        if kind is not None and kind not in KINDS:
            problems.append(f"{where}: unknown docs-test kind {kind!r} (one of {', '.join(sorted(KINDS))})")
            continue
        elif kind is not None and not reason:
            problems.append(f"{where}: the docs-test marker {kind!r} says no reason (<!-- docs-test: {kind}: why -->)")
            continue
        elif b.lang == "output":
            prev = found[-1] if found else None
            if prev is None or prev.lang not in RUNNABLE or prev.kind is not None or prev.expected is not None:
                problems.append(f"{where}: an `output` block that does not follow a block that runs")
            else:
                prev.expected = b.text
            continue
        elif kind is None and b.lang not in RUNNABLE:
            problems.append(
                f"{where}: a ```{info} block is neither a runnable language ({', '.join(sorted(RUNNABLE))}) "
                "nor marked <!-- docs-test: skip|compile|fragment: why -->"
            )
            continue
        found.append(b)
    return found, problems


# --- links -----------------------------------------------------------------

def anchors_of(text):
    """GitHub's anchors for the headings of a Markdown text (and explicit ids)."""
    seen = {}
    out = set()
    in_code = False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = m.group(1).strip().lower()
            slug = re.sub(r"<[^>]+>", "", slug)
            slug = re.sub(r"[^\w\- ]", "", slug)
            slug = slug.replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
        for a in re.findall(r'<a\s+(?:id|name)="([^"]+)"', line):
            out.add(a)
    return out


def link_problems(path, text):
    problems = []
    in_code = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
            if re.match(r"^[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f"{os.path.relpath(path, ROOT)}:{n}"
            if not os.path.exists(dest):
                problems.append(f"{where}: link to {target!r}: no such file")
                continue
            if anchor:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    problems.append(f"{where}: link to {target!r}: an anchor into a file that is not Markdown")
                elif anchor not in anchors_of(open(dest, encoding="utf-8").read()):
                    problems.append(f"{where}: link to {target!r}: no heading gives #{anchor}")
    return problems


# --- running ---------------------------------------------------------------

C_PRELUDE = "#include \"capstan.h\"\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
CPP_PRELUDE = "#include \"capstan.hpp\"\n#include <chrono>\n#include <cstdio>\n#include <string>\n#include <vector>\n"


class Runner:
    def __init__(self, work):
        self.work = work
        self.lib = os.environ.get("CAPSTAN_LIB") or os.path.join(ROOT, "target/release/libcapstan.so")
        self.libdir = os.path.dirname(os.path.abspath(self.lib))
        self.env = dict(os.environ, CAPSTAN_LIB=os.path.abspath(self.lib),
                        LD_LIBRARY_PATH=self.libdir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
        self.count = 0

    def tool(self, var, default):
        value = os.environ.get(var) or default
        if not value or not (os.path.isfile(value) or shutil.which(value)):
            raise RuntimeError(f"{var}: {value or '(unset)'} not found: it runs this language's blocks")
        return value

    def sh(self, argv, cwd=None, env=None, timeout=TIMEOUT):
        try:
            p = subprocess.run(argv, cwd=cwd or self.work, env=env or self.env, capture_output=True,
                               text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{argv[0]} did not end within {timeout} s")
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:3])} ... exited {p.returncode}:\n{p.stdout}{p.stderr}".rstrip())
        return p.stdout

    def file(self, name, text):
        path = os.path.join(self.work, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def run(self, b):
        self.count += 1
        name = f"b{self.count}"
        action = {"compile": "compile", "fragment": "fragment", None: "run"}[b.kind]
        return getattr(self, "run_" + b.lang)(b, name, action)

    def cc(self, compiler, std, extra, src, out, link):
        argv = [compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-pedantic",
                "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "bindings/cpp")] + extra
        if link:
            argv += [src, "-o", out, "-L" + self.libdir, "-Wl,-rpath," + self.libdir, "-lcapstan", "-pthread"]
        else:
            argv += ["-c", src, "-o", out]
        self.sh(argv)

    def run_c(self, b, name, action):
        cc = self.tool("CC", "cc")
        if action == "fragment":
            src = self.file(name + ".c", C_PRELUDE + "void docs_fragment(capstan_registry *reg);\n"
                            "void docs_fragment(capstan_registry *reg) {\n(void)reg;\n#line %d \"%s\"\n%s}\n"
                            % (b.line + 1, b.where().split(":")[0], b.text))
            return self.cc(cc, "c11", [], src, src + ".o", False)
        src = self.file(name + ".c", "#line %d \"%s\"\n" % (b.line + 1, b.where().split(":")[0]) + b.text)
        self.cc(cc, "c11", [], src, os.path.join(self.work, name), True)
        return None if action == "compile" else self.sh([os.path.join(self.work, name)])

    def run_cpp(self, b, name, action):
        cxx = self.tool("CXX", "c++")
        if action == "fragment":
            src = self.file(name + ".cpp", CPP_PRELUDE + "void docs_fragment(capstan::Registry &reg);\n"
                            "void docs_fragment(capstan::Registry &reg) {\n(void)reg;\n#line %d \"%s\"\n%s}\n"
                            % (b.line + 1, b.where().split(":")[0], b.text))
            return self.cc(cxx, "c++17", [], src, src + ".o", False)
        src = self.file(name + ".cpp", "#line %d \"%s\"\n" % (b.line + 1, b.where().split(":")[0]) + b.text)
        self.cc(cxx, "c++17", [], src, os.path.join(self.work, name), True)
        return None if action == "compile" else self.sh([os.path.join(self.work, name)])

    def run_python(self, b, name, action):
        if action != "run":
            compile(b.text, b.where(), "exec")
            return None
        python = self.tool("PYTHON", sys.executable)
        src = self.file(name + ".py", b.text)
        env = dict(self.env, PYTHONPATH=os.path.join(ROOT, "bindings/python"))
        return self.sh([python, src], env=env)

    def run_js(self, b, name, action):
        node = self.tool("NODE", "node")
        nm = os.path.join(self.work, "node", "node_modules")
        if not os.path.exists(os.path.join(nm, "capstan")):
            os.makedirs(nm, exist_ok=True)
            os.symlink(os.path.join(ROOT, "bindings/node"), os.path.join(nm, "capstan"))
            # zod, the binding's optional peer (its devDependency): docs/node.md's zod tools import it.
            zod = os.path.join(ROOT, "bindings/node/node_modules/zod")
            if os.path.isdir(zod):
                os.symlink(zod, os.path.join(nm, "zod"))
        ext = ".cjs" if re.search(r"\brequire\(", b.text) else ".mjs"
        src = self.file(os.path.join("node", name + ext), b.text)
        if action != "run":
            return self.sh([node, "--check", src])
        return self.sh([node, src], cwd=os.path.dirname(src))

    def run_go(self, b, name, action):
        if action == "fragment":
            return None
        go = self.tool("GO", "go")
        mod = os.path.join(self.work, "go")
        if not os.path.exists(os.path.join(mod, "go.mod")):
            os.makedirs(mod, exist_ok=True)
            gomod = open(os.path.join(ROOT, "examples/go/agent/go.mod"), encoding="utf-8").read()
            gomod = gomod.replace("module github.com/capstan-rt/capstan/examples/go/agent", "module capstan.docs/examples")
            gomod = re.sub(r"=> \S+", "=> " + os.path.join(ROOT, "bindings/go"), gomod)
            self.file(os.path.join("go", "go.mod"), gomod)
            shutil.copy(os.path.join(ROOT, "examples/go/agent/go.sum"), os.path.join(mod, "go.sum"))
        self.file(os.path.join("go", name, "main.go"), b.text)
        # The module's dependencies come as go-test's do (the Go module cache, or
        # the environment's proxy on a fresh machine); the Go on PATH, never another.
        env = dict(self.env, CGO_ENABLED="1", GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
        out = os.path.join(mod, name, name)
        # The first build compiles the binding (cgo) and its dependencies: a cold
        # cache on a loaded machine takes minutes, not a hang.
        self.sh([go, "build", "-tags", "capstan_intree", "-o", out, "./" + name], cwd=mod, env=env, timeout=900)
        return None if action == "compile" else self.sh([out])

    def run_java(self, b, name, action):
        if action == "fragment":
            return None
        home = os.environ.get("JAVA_HOME", "")
        java = os.path.join(home, "bin/java")
        if not home or not os.path.isfile(java):
            raise RuntimeError(f"JAVA_HOME: {home or '(unset)'} has no bin/java: a JDK >= 22 runs the Java blocks")
        cp = os.environ.get("JAVA_CP") or ""
        if not cp:
            raise RuntimeError("JAVA_CP: the Java binding's classes and dependencies are needed (make docs-test sets it)")
        src = self.file(os.path.join("java", name, "Example.java"), b.text)
        argv = [java, "--enable-native-access=ALL-UNNAMED", "-Dcapstan.lib=" + os.path.abspath(self.lib), "-cp", cp]
        if action == "compile":
            javac = os.path.join(home, "bin/javac")
            return self.sh([javac, "-d", os.path.dirname(src), "-cp", cp, src])
        return self.sh(argv + [src])

    def run_csharp(self, b, name, action):
        if action == "fragment":
            return None
        mcs, mono = self.tool("MCS", "mcs"), self.tool("MONO", "mono")
        dll = self.tool("CSHARP_DLL", "")
        src = self.file(os.path.join("cs", name + ".cs"), b.text)
        exe = src[:-3] + ".exe"
        self.sh([mcs, "-nologo", "-warnaserror", "-r:" + dll, "-out:" + exe, src])
        if action == "compile":
            return None
        env = dict(self.env, MONO_PATH=os.path.dirname(os.path.abspath(dll)))
        return self.sh([mono, exe], env=env)


def output_problem(expected, actual):
    want = [l.rstrip() for l in expected.rstrip("\n").split("\n")]
    got = [l.rstrip() for l in actual.rstrip("\n").split("\n")]
    if len(want) != len(got):
        return f"printed {len(got)} lines, the text shows {len(want)}:\n{actual}"
    for w, g in zip(want, got):
        pattern = ".*".join(re.escape(part) for part in w.split("..."))
        if not re.fullmatch(pattern, g):
            return f"printed\n  {g}\nwhere the text shows\n  {w}"
    return None


def markdown_files(args):
    if args:
        return [os.path.abspath(a) for a in args]
    docs = os.path.join(ROOT, "docs")
    return [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))


def check(files, runner, log=print):
    """Every problem, as 'file:line: what' strings."""
    problems, todo = [], []
    for path in files:
        text = open(path, encoding="utf-8").read()
        found, marking = blocks_of(path, text)
        problems += marking + link_problems(path, text)
        todo += found
    counts = {}
    for b in todo:
        if b.kind == "skip":
            counts["skipped"] = counts.get("skipped", 0) + 1
            continue
        started = time.monotonic()
        try:
            out = runner.run(b)
            if b.expected is not None and out is not None:
                p = output_problem(b.expected, out)
                if p:
                    raise RuntimeError(p)
            what = {None: "ran", "compile": "compiled", "fragment": "compiled"}[b.kind]
            if b.kind == "fragment" and b.lang not in ("c", "cpp", "python"):
                what = "fragment, not compiled"
            counts[what] = counts.get(what, 0) + 1
            log(f"ok   {b.where()} {b.lang} ({what}, {time.monotonic() - started:.1f} s)")
        except (RuntimeError, SyntaxError) as e:
            problems.append(f"{b.where()}: this {b.lang} block failed: {e}")
            log(f"FAIL {b.where()} {b.lang}")
    return problems, counts


def self_test():
    """The checker refuses what it must: each case must give a problem naming its line."""
    with tempfile.TemporaryDirectory() as work:
        runner = Runner(work)
        heading = "# T\n\n## A section\n\n"
        cases = {
            "an unmarked shell block": (heading + "```sh\nmake\n```\n", ":5: a ```sh block"),
            "a marker without a reason": (heading + "<!-- docs-test: skip -->\n```sh\nmake\n```\n", "says no reason"),
            "an unknown marker": (heading + "<!-- docs-test: maybe: x -->\n```sh\nmake\n```\n", "unknown docs-test kind"),
            "a C block that does not compile": (heading + "```c\nint main(void) { return nope; }\n```\n", ":5: this c block failed"),
            "a C block that fails": (heading + "```c\nint main(void) { return 3; }\n```\n", "exited 3"),
            "a C fragment with a warning": (heading + "<!-- docs-test: fragment: x -->\n```c\nint unused;\n```\n", ":6: this c block failed"),
            "output that differs": (heading + "```c\n#include <stdio.h>\nint main(void) { puts(\"5\"); return 0; }\n```\n\n```output\n6\n```\n", "where the text shows"),
            "an output block after nothing that runs": (heading + "```output\n6\n```\n", "does not follow"),
            "a link to no file": (heading + "See [x](nowhere.md).\n", "no such file"),
            "a link to no heading": (heading + "See [x](#b-section).\n", "no heading gives #b-section"),
        }
        bad = 0
        for what, (text, needle) in cases.items():
            path = os.path.join(work, "case.md")
            with open(path, "w") as f:
                f.write(text)
            problems, _ = check([path], runner, log=lambda _: None)
            if not any(needle in p for p in problems):
                print(f"docs_test self-test: {what}: expected a problem with {needle!r}, got {problems}")
                bad = 1
        good = heading + "See [a](#a-section).\n\n```c\n#include <stdio.h>\nint main(void) { puts(\"5 ok\"); return 0; }\n```\n\n```output\n5 ...\n```\n\n<!-- docs-test: skip: a command -->\n```sh\nmake\n```\n"
        path = os.path.join(work, "good.md")
        with open(path, "w") as f:
            f.write(good)
        problems, counts = check([path], runner, log=lambda _: None)
        if problems or counts.get("ran") != 1:
            print(f"docs_test self-test: a good file gave {problems}, {counts}")
            bad = 1
    if bad:
        sys.exit(1)
    print(f"docs_test: self-test passed ({len(cases)} refusals, one good file)")


def main(argv):
    if "--self-test" in argv:
        self_test()
        return 0
    files = markdown_files([a for a in argv if not a.startswith("--")])
    started = time.monotonic()
    work = os.path.join(ROOT, "build", "docs-test")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    problems, counts = check(files, Runner(work))
    for p in problems:
        print(p)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    if problems:
        print(f"docs-test: {len(problems)} problem(s) in {len(files)} files ({summary})")
        return 1
    print(f"docs-test: every block of {len(files)} files passed ({summary}), links resolve; {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
