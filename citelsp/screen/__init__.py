"""Screening many submissions on several machines: submissions, references and outcomes in
PostgreSQL, one job per distinct work on a Dramatiq queue in Redis.

``submit`` reads each submission as ``citelsp check`` would and records what it cites;
workers (``worker``) verify each work once with the normal engine and store its resolutions;
``report`` rebuilds each submission's snapshot from the stored resolutions and renders the
same per-manuscript summary as ``check --summary-csv``.
"""
