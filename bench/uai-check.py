#!/usr/bin/env python3
"""Checks that a UAI Ataxx engine starts and plays: `uai` (answered by `uaiok`),
`isready` (`readyok`), and with --go also `uainewgame`, `position startpos` and
`go movetime MS` (a `bestmove`). Prints the engine's id and options, its last `info` line
and its move; exits 1 with the reason when a step is not answered within the timeout.

    python3 bench/uai-check.py [--go MS] [--timeout S] ENGINE [ARGS...]

bench/gauntlet.sh runs it (without --go) on every player before a match. Standard
library only.
"""
import argparse
import queue
import subprocess
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--go", type=int, metavar="MS", help="also play a move at `go movetime MS`")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a step may take (default 20)")
    ap.add_argument("--quiet", action="store_true", help="print nothing, only the exit status")
    ap.add_argument("engine", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if not a.engine:
        sys.exit("give the engine's command")
    try:
        p = subprocess.Popen(a.engine, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, bufsize=1)
    except OSError as e:
        sys.exit(f"cannot start {a.engine[0]}: {e}")
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l.rstrip("\n")) for l in p.stdout] + [lines.put(None)],
                     daemon=True).start()
    say = (lambda *_: None) if a.quiet else print

    def send(cmd):
        p.stdin.write(cmd + "\n")
        p.stdin.flush()

    def until(token):
        deadline = time.monotonic() + a.timeout
        got = []
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = "timeout"
            if line is None or line == "timeout":
                p.kill()
                what = "ended" if line is None else f"gave no `{token}` in {a.timeout:g} s"
                sys.exit(f"{a.engine[0]}: {what} (after: {' | '.join(got[-3:]) or 'nothing'})")
            got.append(line)
            if line.split()[:1] == [token]:
                return got

    try:
        send("uai")
        for line in until("uaiok"):
            if line.startswith(("id ", "option ")):
                say(line)
        send("isready")
        until("readyok")
        say("readyok")
        if a.go is not None:
            send("uainewgame")
            send("position startpos")
            send(f"go movetime {a.go}")
            t0 = time.monotonic()
            got = until("bestmove")
            infos = [l for l in got if l.startswith("info")]
            if infos:
                say(infos[-1])
            say(f"{got[-1]}   ({(time.monotonic() - t0) * 1000:.0f} ms)")
        send("quit")
        p.wait(timeout=5)
    except (BrokenPipeError, subprocess.TimeoutExpired):
        p.kill()


if __name__ == "__main__":
    main()
