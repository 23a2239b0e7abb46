"""Resolution: asking bibliographic sources about references and reading their answers."""
