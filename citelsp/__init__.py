"""citelsp: catch fabricated and wrong references while a researcher writes."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("citelsp")
    """The installed distribution's version: pyproject.toml is the one place it is written."""
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
