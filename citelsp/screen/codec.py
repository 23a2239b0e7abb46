"""A resolution as JSON and back, exactly: what a worker stores and a report judges.

The resolution holds what each source answered for one reference (outcomes with their
records, the identifiers, the retraction, routing); the verdict is computed from it by the
normal code wherever it is read. cattrs (already a dependency, through pygls) walks the
dataclasses; records go through their own ``to_dict``/``from_dict``, as the cache stores them.
"""

from __future__ import annotations

from datetime import datetime

import cattrs

from citelsp.resolution.asking import Resolution
from citelsp.resolution.outcome import Record

_converter = cattrs.Converter()
_converter.register_unstructure_hook(datetime, datetime.isoformat)
_converter.register_structure_hook(datetime, lambda value, _type: datetime.fromisoformat(value))
_converter.register_unstructure_hook(Record, lambda r: _converter.unstructure(r.to_dict()))
_converter.register_structure_hook(Record, lambda value, _type: Record.from_dict(value))


def encode(resolution: Resolution) -> dict:
    return _converter.unstructure(resolution)


def decode(data: dict) -> Resolution:
    """``ValueError`` when ``data`` is not a resolution this version can read."""
    try:
        return _converter.structure(data, Resolution)
    except (cattrs.BaseValidationError, TypeError, KeyError) as exc:
        raise ValueError(f"not a stored resolution: {exc}") from exc
