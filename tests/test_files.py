"""Files citelsp writes under a workspace (decisions, reports) are never written through a
symbolic link that leads out of it (issue 29, item 7)."""

from __future__ import annotations

import pytest

from citelsp.files import OutsideWorkspace, write_inside


@pytest.fixture
def places(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "report.json").write_text("theirs")
    return root, outside


def test_a_citelsp_folder_linked_out_of_the_workspace_is_refused(places):
    root, outside = places
    (root / ".citelsp").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutsideWorkspace, match="outside the workspace"):
        write_inside(root, root / ".citelsp" / "report.json", b"ours")
    assert sorted(p.name for p in outside.iterdir()) == ["report.json"]
    assert (outside / "report.json").read_text() == "theirs"


def test_a_report_file_linked_out_of_the_workspace_is_refused(places):
    root, outside = places
    (root / ".citelsp").mkdir()
    (root / ".citelsp" / "report.json").symlink_to(outside / "report.json")
    with pytest.raises(OutsideWorkspace):
        write_inside(root, root / ".citelsp" / "report.json", b"ours")
    assert (outside / "report.json").read_text() == "theirs"


def test_a_link_inside_the_workspace_is_replaced_not_followed(places):
    root, _ = places
    (root / "kept.json").write_text("kept")
    (root / ".citelsp").mkdir()
    (root / ".citelsp" / "report.json").symlink_to(root / "kept.json")
    write_inside(root, root / ".citelsp" / "report.json", b"ours")
    assert (root / ".citelsp" / "report.json").read_text() == "ours"
    assert not (root / ".citelsp" / "report.json").is_symlink()
    assert (root / "kept.json").read_text() == "kept"
    assert sorted(p.name for p in (root / ".citelsp").iterdir()) == ["report.json"]
