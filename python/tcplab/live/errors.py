"""The error of the live testbed (one module so that every part of it can raise it)."""


class LiveError(RuntimeError):
    """A live run could not be set up (one line saying what is missing or wrong)."""
