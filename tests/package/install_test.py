#!/usr/bin/env python3
"""The installed package: `cmake --install` into a temporary prefix, then its layout, its
exports and its consumers.

- Layout: the executable, libweft (shared with its soname links, and static), the
  headers, the CMake package, weft.pc and the man page are where cmake/libweft.cmake says.
- Exports: `weft` and libweft.so export the Lua C API (lua_*, luaL_*, luaopen_*, version
  node LUA_5.4 as Debian's lua5.4) and the C++ API's classes (node WEFT_0), and nothing
  else of their own; the only other definitions allowed are glibc's data objects that an
  executable copies (stdin, ...).
- Consumers: each host under examples/embed/ (NAME.c or NAME.cpp, with NAME.expected) is
  built against the installed tree twice, through find_package(Weft) with
  examples/embed/CMakeLists.txt and through `cc NAME.c $(pkg-config --cflags --libs weft)`
  (`c++ -std=c++20 -pthread NAME.cpp ...`), and both builds must print NAME.expected.
- Static linking: tests/package/static_host.c, linked with the whole of libweft.a and
  -rdynamic (pkg-config --static for the rest), loads Debian's lpeg and cjson, which
  resolve the C API against the executable.

  python3 tests/package/install_test.py --build build --source .
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

API = re.compile(r"^(lua_|luaL_|luaopen_)")
# The C++ API's classes (weft.hpp, WEFT_API), mangled: _ZN4weft + a name's length and name.
CXX_API = re.compile(r"^_ZN[KS]*4weft(7Runtime|5Value|5Scope|4Task|7Channel|6detail)")
LAYOUT = [
    "bin/weft", "lib/libweft.so", "lib/libweft.so.0", "lib/libweft.a",
    "lib/cmake/Weft/WeftConfig.cmake", "lib/cmake/Weft/WeftConfigVersion.cmake",
    "lib/cmake/Weft/WeftTargets.cmake", "lib/pkgconfig/weft.pc",
    "share/man/man1/weft.1", "include/weft/status.h",
]
failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def defined_dynamic_symbols(path):
    """(name, version) of each defined global or weak dynamic symbol of an ELF file."""
    out = run(["readelf", "--dyn-syms", "--wide", path]).stdout
    symbols = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0][:-1].isdigit() or f[6] in ("UND", "ABS") or f[4] == "LOCAL":
            continue  # ABS: the version node's own symbol
        name, _, version = f[7].partition("@")
        symbols.append((name, version.lstrip("@")))
    return symbols


def check_exports(path):
    own = [(n, v) for n, v in defined_dynamic_symbols(path) if not v.startswith("GLIBC_")]
    stray = [n for n, v in own
             if not (API.match(n) and v == "LUA_5.4") and not (CXX_API.match(n) and v == "WEFT_0")]
    check(not stray, "%s exports only the Lua C API and the C++ API%s" % (
        os.path.basename(path), "" if not stray else ": also " + " ".join(sorted(stray)[:10])))


def check_host(source, prefix, work, expected):
    name = os.path.splitext(os.path.basename(source))[0]
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "weft"], env=env)
    check(flags.returncode == 0, "pkg-config --cflags --libs weft")
    exe = os.path.join(work, name + ".pkgconfig")
    compiler = ["c++", "-std=c++20", "-pthread"] if source.endswith(".cpp") else ["cc"]
    cc = run(compiler + [source, "-o", exe, "-Wl,-rpath," + os.path.join(prefix, "lib")] + flags.stdout.split())
    check(cc.returncode == 0, "%s builds with pkg-config%s" % (name, "" if cc.returncode == 0 else ":\n" + cc.stderr))
    if cc.returncode == 0:
        out = run([exe])
        check(out.returncode == 0 and out.stdout == expected, "%s (pkg-config build) prints %s.expected%s" % (
            name, name, "" if out.stdout == expected else ":\n" + out.stdout + out.stderr))


def check_static_host(source, prefix, work):
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    cflags = run(["pkg-config", "--cflags", "weft"], env=env).stdout.split()
    libs = run(["pkg-config", "--static", "--libs-only-other", "--libs-only-l", "weft"], env=env).stdout.split()
    libs = [f for f in libs if f != "-lweft"]
    exe = os.path.join(work, "static_host")
    archive = os.path.join(prefix, "lib", "libweft.a")
    cc = run(["cc", source, "-o", exe] + cflags +
             ["-Wl,--whole-archive", archive, "-Wl,--no-whole-archive", "-rdynamic"] + libs)
    check(cc.returncode == 0, "static_host builds against libweft.a%s" % ("" if cc.returncode == 0 else ":\n" + cc.stderr))
    if cc.returncode == 0:
        out = run([exe])
        check(out.returncode == 0 and out.stdout == "static [1,2]\n",
              "static_host loads lpeg and cjson%s" % ("" if out.returncode == 0 else ":\n" + out.stdout + out.stderr))


def check_cmake_hosts(embed, prefix, work, hosts):
    build = os.path.join(work, "cmake-build")
    conf = run(["cmake", "-S", embed, "-B", build, "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"])
    check(conf.returncode == 0, "examples/embed configures with find_package(Weft)%s" % (
        "" if conf.returncode == 0 else ":\n" + conf.stdout[-2000:] + conf.stderr[-2000:]))
    if conf.returncode != 0:
        return
    b = run(["cmake", "--build", build, "-j", "2"])
    check(b.returncode == 0, "examples/embed builds with find_package(Weft)%s" % (
        "" if b.returncode == 0 else ":\n" + b.stdout[-3000:]))
    for name, expected in hosts:
        out = run([os.path.join(build, name)])
        check(out.returncode == 0 and out.stdout == expected, "%s (find_package build) prints %s.expected%s" % (
            name, name, "" if out.stdout == expected else ":\n" + out.stdout + out.stderr))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="weft-install-") as work:
        prefix = os.path.join(work, "prefix")
        inst = run(["cmake", "--install", args.build, "--prefix", prefix])
        check(inst.returncode == 0, "cmake --install%s" % ("" if inst.returncode == 0 else ":\n" + inst.stderr))
        for rel in LAYOUT:
            check(os.path.exists(os.path.join(prefix, rel)), "installs " + rel)
        for rel in ["bin/weft", "lib/libweft.so"]:
            if os.path.exists(os.path.join(prefix, rel)):
                check_exports(os.path.join(prefix, rel))
        embed = os.path.join(args.source, "examples", "embed")
        hosts = []
        for source in sorted(glob.glob(os.path.join(embed, "*.c")) + glob.glob(os.path.join(embed, "*.cpp"))):
            with open(os.path.splitext(source)[0] + ".expected") as f:
                expected = f.read()
            hosts.append((os.path.splitext(os.path.basename(source))[0], expected))
            check_host(source, prefix, work, expected)
        if hosts:
            check_cmake_hosts(embed, prefix, work, hosts)
        check_static_host(os.path.join(args.source, "tests", "package", "static_host.c"), prefix, work)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
