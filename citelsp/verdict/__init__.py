"""Verdict: outcomes → ``lookup_verified``, reasons, checklist items and human decisions."""
