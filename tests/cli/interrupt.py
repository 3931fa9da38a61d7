#!/usr/bin/env python3
"""Ctrl-C (SIGINT) against `weft`, as lua.c behaves: a running script stops with
"interrupted!" and its traceback on stderr and exit status 1; at the prompt, the
interrupted line reports the same and the next line runs."""
import argparse
import os
import select
import signal
import subprocess
import sys
import time


def wait_for(proc, stream, text, seconds=30):
    """Reads `stream` until `text` appeared; returns what was read."""
    seen = b""
    deadline = time.monotonic() + seconds
    while text not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            sys.exit(f"interrupt.py: timed out waiting for {text!r}; saw {seen!r}")
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    return seen


def check(cond, what, detail):
    if not cond:
        sys.exit(f"interrupt.py: {what}\n{detail}")


def script(weft):
    code = "local function spin() while true do end end\nprint('ready') io.stdout:flush()\nspin()\n"
    proc = subprocess.Popen([weft, "-e", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(proc, proc.stdout, b"ready")
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        sys.exit("interrupt.py: the script did not stop after SIGINT")
    text = err.decode()
    check(proc.returncode == 1, f"exit status {proc.returncode}, expected 1", text)
    check("interrupted!" in text and "stack traceback:" in text and "in local 'spin'" in text,
          "no 'interrupted!' message with a traceback", text)


def prompt(weft):
    proc = subprocess.Popen([weft, "-i"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdin.write(b"print('ready') io.stdout:flush() while true do end\n")
    proc.stdin.flush()
    wait_for(proc, proc.stdout, b"ready")
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    wait_for(proc, proc.stderr, b"interrupted!")
    try:
        out, err = proc.communicate(b"print('after', 6 * 7)\n", timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        sys.exit("interrupt.py: the prompt did not come back after SIGINT")
    check(b"after\t42" in out, "the line after the interrupted one did not run", out.decode() + err.decode())
    check(proc.returncode == 0, f"the session ended with status {proc.returncode}", err.decode())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    script(args.weft)
    prompt(args.weft)
    print("interrupt.py: ok")


if __name__ == "__main__":
    main()
