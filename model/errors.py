"""Errors meant for the person at the command line: the message names what to change, and the
commands print it alone, without a traceback. ValueErrors, as the checks that raise them are."""


class ConfigError(ValueError):
    """A setting outside its rule (the message names the setting and the rule), or one the files on
    disk cannot honour (--resume with nothing to resume)."""


class DataError(ValueError):
    """A shipped data file that fails its check; the message says how to rebuild it."""
