#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Size rules for code a newcomer reads: no C++ function over 60 lines and no source file
over 600 lines in runtime/, sim/ and tools/ (generated files and tests excepted).

    code_size.py [--top N] [root]   # list the largest functions and files; exit 1 on a breach

A function is counted from the first line of its signature to its closing brace, lambdas
and local classes included. Generated files (they say "GENERATED" in their first lines)
are left out.
"""
import os
import re
import sys

FUNCTION_LIMIT = 60
FILE_LIMIT = 600
FOLDERS = ("runtime", "sim", "tools")
SOURCE = (".cpp", ".hpp", ".h", ".cc", ".py", ".sh")
CXX = (".cpp", ".hpp", ".h", ".cc")
SCOPE_KEYWORDS = ("namespace", "class", "struct", "union", "enum", 'extern "C"')
NOT_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|try)\b")


def strip_code(text):
    """Blanks comments, string and character literals, keeping every newline."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(c)  # digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code, i):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def functions(code, start=0, end=None):
    """Yields (name, first line, last line) of every function at namespace or class scope."""
    end = len(code) if end is None else end
    head = start
    i = start
    while i < end:
        c = code[i]
        if c in ";}":
            head = i + 1
        elif c == "{":
            header = code[head:i]
            flat = " ".join(header.split())
            close = matching_brace(code, i)
            in_init_list = re.search(r"\)\s*(noexcept\s*)?:", flat) and re.search(r"[\w>]\s*$", header)
            if in_init_list and not re.search(r"\)\s*$", header.rstrip()) and "(" in flat:
                # a brace initialiser in a constructor's member list: `b_{x}`
                i = close + 1
                continue
            if any(flat.startswith(k) or (" " + k + " ") in (" " + flat) for k in SCOPE_KEYWORDS) \
                    and "(" not in flat.split("{")[0].split("=")[0] or flat.startswith("namespace") \
                    or flat.startswith('extern "C"'):
                yield from functions(code, i + 1, close)
            elif "(" in flat and ")" in flat and not NOT_FUNCTION.match(flat) and "=" not in flat.split("(")[0]:
                first = head + len(header) - len(header.lstrip())
                name = re.sub(r"\s+", " ", flat.split("(")[0]).split(" ")[-1]
                yield name, code.count("\n", 0, first) + 1, code.count("\n", 0, close) + 1
            i = close + 1
            head = i
            continue
        i += 1


def generated(text):
    return "GENERATED" in text[:600]


def scan(root):
    funcs, files = [], []
    for folder in FOLDERS:
        for dirpath, dirnames, names in os.walk(os.path.join(root, folder)):
            dirnames[:] = [d for d in dirnames if d not in ("node_modules", "__pycache__")]
            for name in names:
                if not name.endswith(SOURCE):
                    continue
                path = os.path.join(dirpath, name)
                text = open(path, encoding="utf-8", errors="replace").read()
                if generated(text):
                    continue
                rel = os.path.relpath(path, root)
                files.append((text.count("\n"), rel))
                if name.endswith(CXX):
                    for fname, a, b in functions(strip_code(text)):
                        funcs.append((b - a + 1, rel, a, fname))
    return sorted(funcs, reverse=True), sorted(files, reverse=True)


def main():
    args = sys.argv[1:]
    top = 10
    if args[:1] == ["--top"]:
        top, args = int(args[1]), args[2:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    funcs, files = scan(root)
    long_funcs = [f for f in funcs if f[0] > FUNCTION_LIMIT]
    long_files = [f for f in files if f[0] > FILE_LIMIT]
    print(f"{len(funcs)} functions, {len(long_funcs)} over {FUNCTION_LIMIT} lines; "
          f"{len(files)} files, {len(long_files)} over {FILE_LIMIT} lines")
    print("largest functions:")
    for lines, path, line, name in funcs[:max(top, len(long_funcs))]:
        print(f"  {lines:5d}  {path}:{line}  {name}")
    print("largest files:")
    for lines, path in files[:max(top, len(long_files))]:
        print(f"  {lines:5d}  {path}")
    return 1 if long_funcs or long_files else 0


if __name__ == "__main__":
    sys.exit(main())
