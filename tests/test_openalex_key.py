"""OpenAlex refusals without an API key: "unreachable", and one pointer to the setting."""

from __future__ import annotations

from tests.apiserver import ApiServer, load_default_routes
from tests.test_check_e2e import run_cli

BIB = """@article{real,
  title = {Augmenting large language models with chemistry tools},
  author = {Bran, Andres M.},
  year = {2024},
  doi = {10.1038/s42256-024-00832-8},
}
@article{titleonly,
  title = {Augmenting large language models with chemistry tools},
  author = {Bran, Andres M.},
  year = {2024},
}
"""


def test_refusals_are_unreachable_and_reported_once(tmp_path):
    server = ApiServer().start()
    try:
        load_default_routes(server)
        server.fail("openalex", 403)
        bib = tmp_path / "refs.bib"
        bib.write_text(BIB, encoding="utf-8")
        done = run_cli(server, "check", str(bib), "--format", "json", "--fail-on", "never",
                       cache_dir=tmp_path / "cache", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("CITELSP_OPENALEX_API_KEY") == 1
        assert '"unreachable"' in done.stdout and '"false"' not in done.stdout

        with_key = run_cli(server, "check", str(bib), "--format", "json", "--fail-on", "never",
                           cache_dir=tmp_path / "cache2", cwd=tmp_path,
                           env={"CITELSP_OPENALEX_API_KEY": "secret-key-123"})
        assert "CITELSP_OPENALEX_API_KEY" not in with_key.stderr
        assert "secret-key-123" not in with_key.stdout + with_key.stderr
    finally:
        server.stop()
