"""The `ropekit` console script of a pip install: runs the command line built with the module (ropekit/_bin)."""

import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "ropekit")
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"error: the ropekit command line is not installed beside the module ({exe})\n")
        return 2
    os.execv(exe, [exe, *sys.argv[1:]])  # the process becomes the command: its exit code, signals and streams


if __name__ == "__main__":
    sys.exit(main())
