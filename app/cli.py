"""The heads-positions command: lesson, serve, corpus, train."""

import argparse
import importlib
import signal
import sys

# Each command's module, imported only when needed: `serve` must not load torch in uvicorn's
# supervisor process (230 MB and 2-3 s before the workers even start).
COMMANDS = {
    "lesson": "app.commands.lesson",
    "serve": "app.commands.serve",
    "corpus": "app.commands.corpus",
    "train": "app.commands.train",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="heads-positions", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        if only in (None, name):
            importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # `heads-positions lesson | head` should end quietly when head closes the pipe.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    argv = sys.argv[1:] if argv is None else argv
    only = argv[0] if argv and argv[0] in COMMANDS else None
    args = build_parser(only).parse_args(argv)
    return args.run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
