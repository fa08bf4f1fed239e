"""The heads-positions command: lesson, serve, corpus, train."""

import argparse
import importlib
import os
import sys

# Each command's module, imported only when needed: `serve` must not load torch in uvicorn's
# supervisor process, which would then hold its memory and start the workers later (docs/benchmarks.md).
COMMANDS = {
    "lesson": "app.commands.lesson",
    "serve": "app.commands.serve",
    "corpus": "app.commands.corpus",
    "train": "app.commands.train",
}
# Commands whose output a user may pipe into `head` or `less`. Not `serve`: see run_printing.
PRINTING = {"lesson", "corpus", "train"}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="heads-positions", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        if only in (None, name):
            importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    only = argv[0] if argv and argv[0] in COMMANDS else None
    args = build_parser(only).parse_args(argv)
    if args.command in PRINTING:
        return run_printing(args)
    return args.run(args) or 0


def run_printing(args: argparse.Namespace) -> int:
    """Run a command whose reader may stop early (`heads-positions lesson | head -1`): end quietly with 0.

    This catches the closed pipe on this command's own stdout. It never sets SIGPIPE to SIG_DFL: that
    setting is process-wide, and under `serve` it made a client that hangs up kill the server (exit 141).
    """
    try:
        code = args.run(args) or 0
        sys.stdout.flush()  # here, so a closed pipe fails inside the try and not in the interpreter's exit
    except BrokenPipeError:
        # Python flushes stdout once more at exit; send that flush to /dev/null instead of the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
