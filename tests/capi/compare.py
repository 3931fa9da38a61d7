#!/usr/bin/env python3
"""Runs a C API test program built against the oracle (Debian's liblua5.4) and the same
program built against Weft, and fails unless both exit 0 and print the same stdout.

Each program runs in its own empty temporary directory, so the files a test writes do not
collide when the two (or several variants) run at once."""
import argparse
import difflib
import os
import subprocess
import sys
import tempfile


def run(exe, env):
    with tempfile.TemporaryDirectory(prefix="weft-capi-") as cwd:
        proc = subprocess.run([exe], cwd=cwd, env=env, capture_output=True, timeout=240)
    return proc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--subject", required=True)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the subject")
    args = ap.parse_args()

    oracle = run(args.oracle, dict(os.environ))
    subject_env = dict(os.environ)
    for item in args.env:
        name, _, value = item.partition("=")
        subject_env[name] = value
    subject = run(args.subject, subject_env)

    ok = True
    for label, proc in (("oracle", oracle), ("subject", subject)):
        if proc.returncode != 0:
            ok = False
            print(f"{label} exited with {proc.returncode}; stderr:")
            sys.stdout.write(proc.stderr.decode(errors="replace"))
    want = oracle.stdout.decode(errors="replace").splitlines(keepends=True)
    got = subject.stdout.decode(errors="replace").splitlines(keepends=True)
    if want != got:
        ok = False
        sys.stdout.writelines(difflib.unified_diff(want, got, "oracle", "subject"))
    if ok:
        print(f"{len(got)} lines agree")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
