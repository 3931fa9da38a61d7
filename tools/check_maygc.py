#!/usr/bin/env python3
"""Checks the house rule that a function which may collect says so in its name.

DEVELOPERS.md: "A function that may trigger a GC or re-enter Lua says so in its name".
A function whose name ends in `MayGC` may collect; so may every function that calls one.
This reads the C++ sources of the runtime's layers and reports each function definition,
not itself named `...MayGC`, whose body calls a `...MayGC` function, unless the function
is in ALLOWED below with the reason it may call one without saying so.

  python3 tools/check_maygc.py [ROOT]     # exit 1 and one line per violation

It reads text, not a compiler's AST: comments and literals are blanked, and a function is
a brace block at namespace or class level whose head ends in a parameter list. That is
exact for this code base's style (clang-format, no macros that define functions); calls
inside a lambda count for the function that contains the lambda, which is the
conservative reading.
"""
import os
import re
import sys

LAYERS = ["frontend", "gc", "vm", "runtime", "tools"]
SUFFIXES = (".cpp", ".h")

# name -> why it may reach a MayGC function without the suffix. Keep them few.
ALLOWED = {
    "main": "the program's entry: everything below it may collect",
    "~Runtime": "weft::Runtime's destructor (weft.hpp rule 4): the end of a host's runtime "
                "ends its tasks and runs the finalizers; a destructor has no name to change",
    "runTask": "sched::Executor's one entry (runtime/sched/scheduler.h): running a task runs "
               "Lua; the scheduler layer knows nothing of the collector, so the interface "
               "cannot name it",
}
# The tag (DEVELOPERS.md: "or takes a MayGC tag"): a function returning NativeResult
# (vm/api.h) is a native or one of CallContext's ways to end one (raise, error, argError,
# stackOverflow...). Ending a native may raise, which runs the message handler at the
# error point, so its result type says that it may collect.
# The Lua C API (runtime/capi, include/weft/lua): its names are Lua's, fixed by the
# reference manual, and any lua_*/luaL_* function may run Lua code or collect, as in PUC
# Lua; the API's callers are C code, which the collector never scans. Weft's own C
# extensions (include/weft/lua/lweft.h, weft_*) follow the same rule.
C_API = re.compile(r"^(lua|luaL|luaopen|weft)_\w+$")
NATIVE = re.compile(r"(^|[\s;}])NativeResult\s+(CallContext::)?\w+\s*\(")

KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof",
            "decltype", "static_assert", "noexcept", "requires", "alignas"}
SCOPE_OPENERS = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;{}()]*$|extern\s+\"C\"\s*$")
CALL = re.compile(r"\b([A-Za-z_]\w*MayGC)\s*(?:<[^;{}()]*>)?\s*\(")
HEAD = re.compile(r"([~A-Za-z_][\w:~]*)\s*(?:<[^;{}()]*>)?\s*$")


def blank(text):
    """Comments, string and character literals as spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(head):
    """The name a definition's head declares, or None if the block is not a function.

    `head` is the text between the previous `;`, `{` or `}` and this `{`.
    """
    head = re.sub(r"\)\s*(const|noexcept|override|final|mutable|&|&&|->\s*[\w:<>*&, ]+|\s)*$", ")", head)
    head = re.sub(r"\)\s*:\s*[^()]*(\([^()]*\)[^()]*)*$", ")", head)  # constructor init lists
    if not head.endswith(")"):
        return None
    depth, i = 0, len(head) - 1
    while i >= 0:
        depth += {")": 1, "(": -1}.get(head[i], 0)
        if depth == 0:
            break
        i -= 1
    m = HEAD.search(head[:i])
    if not m:
        return None
    name = m.group(1).split("::")[-1]
    return None if name in KEYWORDS else name


def violations(path):
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    found = []
    stack = []  # per open brace: ("scope" | "func" | "block", name)
    last = 0  # where the current head starts
    for m in re.finditer(r"[{};]", text):
        ch, pos = m.group(), m.start()
        inside = next((s for s in reversed(stack) if s[0] == "func"), None)
        if ch == "{":
            head = text[last:pos].strip()
            if inside:
                stack.append(("block", None))
            elif SCOPE_OPENERS.search(head) or not head:
                stack.append(("scope", None))
            else:
                name = function_name(head)
                if name and NATIVE.search(head):
                    name = None  # tagged by its type
                stack.append(("func", name, pos) if name else ("block", None))
        elif ch == "}":
            if stack:
                top = stack.pop()
                if top[0] == "func":
                    body = text[top[2]:pos]
                    name = top[1]
                    if not name.endswith("MayGC") and name not in ALLOWED and not C_API.match(name):
                        callees = sorted(set(CALL.findall(body)))
                        if callees:
                            line = text.count("\n", 0, top[2]) + 1
                            found.append((path, line, name, callees))
        last = pos + 1
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = []
    for layer in LAYERS:
        for dirpath, _, files in os.walk(os.path.join(root, layer)):
            for f in sorted(files):
                if f.endswith(SUFFIXES):
                    found += violations(os.path.join(dirpath, f))
    for path, line, name, callees in found:
        print("%s:%d: %s calls %s but is not named ...MayGC" % (
            os.path.relpath(path, root), line, name, ", ".join(callees)))
    print("check_maygc: %d function%s reach a MayGC function without saying so" % (
        len(found), "" if len(found) == 1 else "s"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
