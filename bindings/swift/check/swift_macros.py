#!/usr/bin/env python3
"""Which of capstan.h's constant macros Swift can import, and as what type.

There is no Swift toolchain on our machines, so this applies the rules of
Swift's Clang importer (swift/lib/ClangImporter/ImportMacro.cpp) to the macro
definitions clang reports (`clang -E -dM`): after dropping one layer of
parentheses, Swift imports a literal, a +/-/~ sign and a number, an
identifier naming another importable macro, or `A op B` where A and B are
integer literals or such macros; a cast to a typedef (e.g. `(uint32_t)1`) is
not imported. An integer literal gets the Swift type of its C type: `1` is
Int32, `1u` UInt32, `1UL` UInt, ...

Fails (exit 1) when a constant in one of capstan's families does not import
at all. A constant that imports with another type than the C field or
parameter it goes into still works in Swift through a conversion
(`UInt32(CAPSTAN_TOOL_SERIAL)`); those are listed, with the header change
that would make them direct.

Usage: swift_macros.py MACROS.txt   (output of `clang -E -dM` over capstan.h)
"""
import re
import sys

TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:\\.|[^"\\])*")|(?P<num>\.?\d[\w.]*)|(?P<id>[A-Za-z_]\w*)'
    r"|(?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>(),]))"
)

# Swift type of each C integer type, and (bits, unsigned) for the importer's ordering.
SWIFT = {
    "int": ("Int32", 32, False),
    "unsigned int": ("UInt32", 32, True),
    "long": ("Int", 64, False),
    "unsigned long": ("UInt", 64, True),
    "long long": ("Int64", 64, False),
    "unsigned long long": ("UInt64", 64, True),
}
CAST_TYPES = {"int": "int", "long": "long", "unsigned": "unsigned int", "short": "int", "char": "int"}

# The C type each family of constants is used with, as Swift sees it.
EXPECTED = [
    (re.compile(r"^CAPSTAN_NTS$"), "Int", "a size_t length (Swift Int)"),
    (re.compile(r"^CAPSTAN_(OK|ERR_\w+)$"), "Int32", "capstan_status (int32_t)"),
    (re.compile(r"^CAPSTAN_(CONTENT|FORMAT|OUTCOME|EVENT|LOG)_\w+$"), "UInt32", "a uint32_t typedef"),
    (re.compile(r"^CAPSTAN_(TOOL|REGISTRY|EXEC|EXPORT)_\w+$"), "UInt32", "a uint32_t flags field"),
    (re.compile(r"^CAPSTAN_MCP_INPUT_(ELICITATION|SAMPLING|ROOTS)$"), "UInt32", "a uint32_t flags field (input_methods)"),
    (re.compile(r"^CAPSTAN_VERSION_\w+$"), None, "a version number or string"),
]


def tokenize(body):
    out, pos = [], 0
    body = body.strip()
    while pos < len(body):
        m = TOKEN.match(body, pos)
        if not m or m.end() == pos:
            return None
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def integer_literal(text):
    """(value, C type) of an integer literal, or None (floats, bad suffixes)."""
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)([uUlL]*)", text)
    if not m:
        return None
    digits, suffix = m.group(1), m.group(2).lower()
    if suffix not in ("", "u", "l", "ul", "lu", "ll", "ull", "llu"):
        return None
    if digits[:2].lower() == "0x":
        value, decimal = int(digits, 16), False
    elif digits.startswith("0") and len(digits) > 1:
        value, decimal = int(digits, 8), False
    else:
        value, decimal = int(digits), True
    unsigned = "u" in suffix
    longs = suffix.count("l")
    if longs == 0:
        candidates = ["int", "long"] if decimal else ["int", "unsigned int", "long", "unsigned long"]
    elif longs == 1:
        candidates = ["long"] if decimal else ["long", "unsigned long"]
    else:
        candidates = ["long long"] if decimal else ["long long", "unsigned long long"]
    if unsigned:
        candidates = ["unsigned " + c if not c.startswith("unsigned") else c for c in candidates]
    for c in candidates:
        _, bits, uns = SWIFT[c]
        if value < (1 << bits if uns else 1 << (bits - 1)):
            return value, c
    return None


class Importer:
    def __init__(self, macros):
        self.macros = macros

    def integer(self, token, visited):
        kind, text = token
        if kind == "num":
            lit = integer_literal(text)
            return (lit[0], SWIFT[lit[1]]) if lit else None
        if kind == "id" and text in self.macros and text not in visited:
            got = self.import_macro(text, visited | {text})
            if got and got[0] != "String" and isinstance(got[1], int):
                return got[1], next(v for v in SWIFT.values() if v[0] == got[0])
        return None

    def import_macro(self, name, visited):
        """(swift type, value) or (None, why not)."""
        params, body = self.macros[name]
        if params is not None:
            return None, "function-like macro"
        toks = tokenize(body)
        if not toks:
            return None, "empty or unparsable"
        if len(toks) > 2 and toks[0][1] == "(" and toks[-1][1] == ")":
            toks = toks[1:-1]
        if len(toks) > 3 and toks[0][1] == "(" and toks[2][1] == ")":
            if toks[1][1] not in CAST_TYPES:
                return None, "cast to a typedef (Swift imports only casts to builtin types)"
            toks = toks[3:]
        if len(toks) == 1:
            kind, text = toks[0]
            if kind == "str":
                return "String", text
            if kind == "num":
                lit = integer_literal(text)
                return (SWIFT[lit[1]][0], lit[0]) if lit else (None, "not an integer literal")
            if kind == "id":
                if text not in self.macros:
                    return None, f"names {text}, which is not a macro"
                if text in visited:
                    return None, "recursive"
                return self.import_macro(text, visited | {text})
            return None, "unsupported token"
        if len(toks) == 2 and toks[0][1] in "+-~" and toks[1][0] == "num":
            lit = integer_literal(toks[1][1])
            if not lit:
                return None, "not an integer literal"
            value = {"+": lit[0], "-": -lit[0], "~": ~lit[0]}[toks[0][1]]
            return SWIFT[lit[1]][0], value
        if len(toks) == 3:
            a, b = self.integer(toks[0], visited), self.integer(toks[2], visited)
            op = toks[1][1]
            if not a or not b:
                return None, "operands are not integer literals or integer macros"
            ops = {
                "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
                "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y,
                "|": lambda x, y: x | y, "&": lambda x, y: x & y, "^": lambda x, y: x ^ y,
            }
            if op not in ops:
                return None, f"operator {op} is not imported"
            (va, ta), (vb, tb) = a, b
            wider = ta if (ta[1], ta[2]) >= (tb[1], tb[2]) else tb
            return wider[0], ops[op](va, vb)
        return None, f"{len(toks)} tokens: not a shape Swift imports"


def parse(lines):
    macros = {}
    for line in lines:
        m = re.match(r"#define\s+(\w+)(\(([^)]*)\))?\s?(.*)$", line.rstrip("\n"))
        if m:
            macros[m.group(1)] = (m.group(3), m.group(4))
    return macros


def self_test():
    """The importer rules above on shapes whose Swift import is known."""
    macros = parse(
        [
            "#define SIZE_MAX (18446744073709551615UL)",
            "#define A (1 << 2)",
            "#define B (1u << 2)",
            "#define C ((uint32_t)1 << 2)",
            "#define D SIZE_MAX",
            "#define E 0x80000000",
            "#define F -3",
            "#define G (A | B)",
            "#define H(x) (x)",
            "#define I UINT32_C(1)",
            '#define J "0.1.0"',
        ]
    )
    expect = {"A": "Int32", "B": "UInt32", "C": None, "D": "UInt", "E": "UInt32", "F": "Int32",
              "G": "UInt32", "H": None, "I": None, "J": "String"}
    importer = Importer(macros)
    bad = [(n, t, importer.import_macro(n, {n})[0]) for n, t in expect.items() if importer.import_macro(n, {n})[0] != t]
    for name, want, got in bad:
        print(f"swift_macros self-test: {name} imported as {got}, expected {want}")
    return 1 if bad else 0


def main(path):
    if self_test():
        return 1
    macros = parse(open(path, encoding="utf-8"))
    importer = Importer(macros)
    failed, convert, checked = [], [], 0
    for name in sorted(macros):
        rule = next((r for r in EXPECTED if r[0].match(name)), None)
        # The *_INIT macros are aggregate initializers for C and C++ hosts;
        # Swift gets the same zero-filled struct from the imported init().
        if rule is None or name.endswith("_INIT"):
            continue
        checked += 1
        swift_type, value = importer.import_macro(name, {name})
        body = macros[name][1].strip()
        if swift_type is None:
            failed.append(name)
            print(f"  NOT IMPORTED  {name} = {body}: {value}")
        elif rule[1] is not None and swift_type != rule[1]:
            convert.append(name)
            how = f"Int(bitPattern: UInt({name})) or capstanNTS" if rule[1] == "Int" else f"{rule[1]}({name})"
            print(f"  convert       {name} = {body}: Swift {swift_type}; used as {rule[2]}: write {how}")
        else:
            print(f"  ok            {name} = {body}: Swift {swift_type}")
    if checked == 0:
        print("swift_macros: no capstan constants found: wrong input?")
        return 1
    print(
        f"swift_macros: {checked} constants: {checked - len(failed) - len(convert)} import with their C type, "
        f"{len(convert)} import but need a conversion, {len(failed)} do not import"
    )
    if convert:
        print(
            "  (direct use would need unsigned literals for unsigned constants, e.g. (1u << 1), 1u; "
            "CAPSTAN_NTS is size_t in C but Int in Swift: the Capstan module exports capstanNTS)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
