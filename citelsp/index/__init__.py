"""The local index: the open snapshots (OpenAlex, Crossref, DBLP, arXiv, DataCite) read into one
SQLite file that the request plan asks before any service.

``readers`` turn each publisher's files into Records with the same parsers the API answers go
through; ``build`` writes them; ``query`` reads them back by identifier and by title.
"""
