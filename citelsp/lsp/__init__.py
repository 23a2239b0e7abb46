"""The language server: the only package that imports pygls or lsprotocol."""
