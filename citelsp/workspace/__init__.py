"""The workspace: the protocol-free model the language server and ``citelsp check`` share."""

from citelsp.workspace.snapshot import ReferenceResult, Snapshot
from citelsp.workspace.verification import Listener
from citelsp.workspace.workspace import Workspace, folders_without_work

__all__ = ["Listener", "ReferenceResult", "Snapshot", "Workspace", "folders_without_work"]
