"""The heads-positions command: lesson, serve, corpus, train."""

import argparse
import signal
import sys

from app.commands import corpus, lesson, serve, train


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="heads-positions", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (lesson, serve, corpus, train):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # `heads-positions lesson | head` should end quietly when head closes the pipe.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = build_parser().parse_args(argv)
    return args.run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
