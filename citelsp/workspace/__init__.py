"""The workspace: the protocol-free model the language server and ``citelsp check`` share."""

from citelsp.workspace.snapshot import ReferenceResult, Snapshot
from citelsp.workspace.verification import Listener
from citelsp.workspace.workspace import NOTHING_IN_FOLDER, Workspace

__all__ = ["NOTHING_IN_FOLDER", "Listener", "ReferenceResult", "Snapshot", "Workspace"]
