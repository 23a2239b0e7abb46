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


def test_a_folder_swapped_for_a_link_after_the_check_is_refused(places, monkeypatch):
    """The race: ``.citelsp`` is a real folder when checked and a link out of the workspace
    when written. The write walks the folders without following links, so it is refused."""
    import citelsp.files as files

    root, outside = places
    (root / ".citelsp").mkdir()
    checked = files.inside

    def check_then_swap(path, at):
        ok = checked(path, at)
        if path == root / ".citelsp" / "report.json":
            (root / ".citelsp").rmdir()
            (root / ".citelsp").symlink_to(outside, target_is_directory=True)
        return ok

    monkeypatch.setattr(files, "inside", check_then_swap)
    with pytest.raises(OutsideWorkspace, match="changed into a link"):
        write_inside(root, root / ".citelsp" / "report.json", b"ours")
    assert sorted(p.name for p in outside.iterdir()) == ["report.json"]
    assert (outside / "report.json").read_text() == "theirs"


def test_missing_folders_are_created_and_no_temporary_file_is_left(places):
    root, _ = places
    write_inside(root, root / ".citelsp" / "a" / "report.json", b"ours")
    write_inside(root, root / ".citelsp" / "a" / "report.json", b"again")
    assert (root / ".citelsp" / "a" / "report.json").read_bytes() == b"again"
    assert sorted(p.name for p in (root / ".citelsp" / "a").iterdir()) == ["report.json"]
