#!/usr/bin/env python3
"""A wait at the prompt that only a later line can end (issue 15, "the main chunk waits
like a task"): the line reports the deadlock as its error and the session goes on, and
the later line ends the wait that a task still has. The same in deterministic mode. A
script's deadlock still ends the run with status 1."""
import argparse
import subprocess
import sys

LINES = b"""ch = task.channel()
ch:recv()
t = task.spawn(function() return ch:recv() end)
ch:send(5)
print('got', t:await())
"""


def check(cond, what, detail):
    if not cond:
        sys.exit(f"prompt_deadlock.py: {what}\n{detail}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    for mode in ([], ["--deterministic"]):
        proc = subprocess.run([args.weft, *mode, "-i"], input=LINES, capture_output=True, timeout=60)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        check(proc.returncode == 0, f"{mode}: the session ended with status {proc.returncode}", err)
        check("deadlock: all tasks are blocked" in err and "task main: recv on channel" in err,
              f"{mode}: the line's deadlock was not reported", err)
        check("got\t5\ttrue" in out, f"{mode}: the later line did not end the task's wait", out + err)
    script = subprocess.run([args.weft, "-e", "task.channel():recv()"], capture_output=True, timeout=60)
    check(script.returncode == 1 and b"deadlock: all tasks are blocked" in script.stderr,
          "a script's deadlock did not end the run with status 1", script.stderr.decode())
    print("prompt_deadlock.py: ok")


if __name__ == "__main__":
    main()
