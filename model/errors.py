"""Errors meant for the person at the command line: the message names what to change, and the
commands print it alone, without a traceback. ValueErrors, as the checks that raise them are."""


class ConfigError(ValueError):
    """A setting outside its rule (the message names the setting and the rule), or one the files on
    disk cannot honour (--resume with nothing to resume)."""


class DataError(ValueError):
    """A shipped data file that fails its check; the message says how to rebuild it."""


class MissingExtra(ConfigError):
    """A training-only package (the `train` extra) is not installed: the served app never needs it."""


def train_extra(module: str):
    """Import a package of the `train` extra (opencc, tqdm) where a command first needs it, or say how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise MissingExtra(f"{module} is missing: training and building the corpus need the train extra, "
                           "pip install -e '.[train]'") from None


class ModelFileError(ValueError):
    """A model file that cannot be served: the message is one line naming the file and the reason."""

    def __init__(self, path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = str(path), reason
