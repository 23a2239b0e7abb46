"""citelsp: catch fabricated and wrong references while a researcher writes."""

__version__ = "0.1.0"
