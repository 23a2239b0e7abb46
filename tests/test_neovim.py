"""The Neovim plugin (editors/nvim) driven in a real headless Neovim.

The plugin is loaded as a plugin manager would: editors/nvim on the runtimepath, then
``require("citelsp").setup(...)``. Neovim starts the real server over stdio (on 0.7 through
``vim.lsp.start_client``); a Lua probe waits for diagnostics, asks for a hover, a completion
and code actions, runs commands (one opens a link through a stand-in ``xdg-open``) and
``:checkhealth citelsp``, and writes what it saw as JSON. The server runs offline with a
private cache, so nothing reaches the network.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from citelsp import __version__

NVIM = os.environ.get("CITELSP_TEST_NVIM") or shutil.which("nvim")
"""Debian's Neovim 0.7.2 in CI; CITELSP_TEST_NVIM runs the same probe on another build."""
PLUGIN = Path(__file__).resolve().parents[1] / "editors" / "nvim"

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not on PATH (apt install neovim)")

PAPER = """\
---
title: Probe
bibliography: refs.bib
---

Residual networks [@he2016deep] changed vision.
This one is not in the bibliography [@missing].
Both on one line: [@he2016deep] and [@absent].
"""

REFS = """\
@article{he2016deep,
  author = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  title = {Deep Residual Learning for Image Recognition},
  journal = {Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition},
  year = {2016},
}
"""

OTHERS = {
    "chapter.qmd": "---\ntitle: Q\nbibliography: refs.bib\n---\n\n```{python}\n"
                   "x = 'a@b.org'  # @inchunk\n```\n\n"
                   "See @fig-plot and [@he2016deep]; not [@gone2020].\n",
    "notes.Rmd": "---\noutput: html_document\nbibliography: refs.bib\n---\n\n```{r}\n"
                 "fit@call  # @inchunk\n```\n\nAs [@he2016deep], `r fit@rank`, not [@gone2020].\n",
}
"""Quarto and R Markdown: each cites one missing key (0-based line 9); ``@`` in code is none."""

DOI_URL = "https://doi.org/10.1109/CVPR.2016.90"

SETTINGS = {"offline": True, "minPriority": "P3", "debounceMs": 50}

INIT = """\
local params = vim.fn.json_decode(vim.fn.readfile(os.getenv("CITELSP_PROBE")))
_G.citelsp_probe = { configuration = {}, notifications = {}, messages = {} }
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(_G.citelsp_probe.notifications, message)
  return notify(message, level, opts)
end
local show_message = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, result, ctx, config)
  table.insert(_G.citelsp_probe.messages, result.message)
  return show_message(err, result, ctx, config)
end
local answer = vim.lsp.handlers["workspace/configuration"]
vim.lsp.handlers["workspace/configuration"] = function(err, result, ctx, config)
  local response = answer(err, result, ctx, config)
  table.insert(_G.citelsp_probe.configuration, { items = result.items, response = response })
  return response
end
vim.opt.runtimepath:prepend(params.plugin)
require("citelsp").setup({ cmd = params.cmd, cmd_env = params.env, settings = params.settings })
"""

PROBE = """\
local params = vim.fn.json_decode(vim.fn.readfile(os.getenv("CITELSP_PROBE")))
local out = { configuration = _G.citelsp_probe.configuration, filetype = vim.bo.filetype,
  renders_markdown = vim.fn.has("nvim-0.10") == 1 }

local deadline = vim.loop.hrtime() / 1e6 + params.budget_ms

-- Each wait is capped at wait_ms, and all of them together at budget_ms.
local function limit()
  return math.floor(math.max(1, math.min(params.wait_ms, deadline - vim.loop.hrtime() / 1e6)))
end

local function citelsp_client()
  for _, client in pairs(vim.lsp.buf_get_clients(0)) do
    if client.name == "citelsp" then
      return client
    end
  end
end

local function code_of(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
end

local function dangling()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if code_of(d) == "DANGLING_CITATION" then
      return true
    end
  end
  return false
end

local function first_result(responses)
  for _, response in pairs(responses or {}) do
    if response.result then
      return response.result
    end
  end
end

local function position(line, character)
  return { textDocument = { uri = vim.uri_from_bufnr(0) }, position = {
    line = line, character = character } }
end

local function probe()
  out.attached = vim.wait(limit(), function() return citelsp_client() ~= nil end, 50)
  local client = citelsp_client()
  out.root_dir = client and client.config.root_dir
  out.got_diagnostics = vim.wait(limit(), function()
    return dangling() and #out.configuration > 0
  end, 50)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.diagnostics, { code = code_of(d), lnum = d.lnum, col = d.col,
      end_lnum = d.end_lnum, end_col = d.end_col, severity = d.severity, source = d.source })
  end

  local hover = first_result(vim.lsp.buf_request_sync(0, "textDocument/hover",
    position(params.hover[1], params.hover[2]), limit()))
  out.hover = hover and hover.contents

  -- The hover as the writer sees it: the lines of the floating window K opens.
  vim.api.nvim_win_set_cursor(0, { params.hover[1] + 1, params.hover[2] })
  vim.lsp.buf.hover()
  local float
  vim.wait(limit(), function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        float = win
        return true
      end
    end
    return false
  end, 50)
  out.hover_window = float
    and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false)
  if float then
    vim.api.nvim_win_close(float, true)
  end

  -- An Error and an Information on one line: which sign and virtual text the writer sees.
  local namespace = vim.lsp.diagnostic.get_namespace(client.id)
  out.mixed_got = vim.wait(limit(), function()
    local severities = {}
    for _, d in ipairs(vim.diagnostic.get(0, { lnum = params.mixed_line })) do
      severities[d.severity] = true
    end
    return severities[vim.diagnostic.severity.ERROR] and severities[vim.diagnostic.severity.INFO]
  end, 50)
  vim.wait(200)
  out.mixed_signs = {}
  local placed = vim.fn.sign_getplaced(vim.api.nvim_get_current_buf(),
    { group = "*", lnum = params.mixed_line + 1 })
  for _, sign in ipairs(placed[1].signs) do
    table.insert(out.mixed_signs, sign.name)
  end
  local virt_ns = vim.diagnostic.get_namespace(namespace).user_data.virt_text_ns
  out.mixed_virtual_text = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, virt_ns, { params.mixed_line, 0 },
      { params.mixed_line, -1 }, { details = true })) do
    for _, chunk in ipairs(mark[4].virt_text or {}) do
      table.insert(out.mixed_virtual_text, chunk[1])
    end
  end

  local actions = first_result(vim.lsp.buf_request_sync(0, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    range = { start = { line = params.hover[1], character = params.hover[2] },
              ["end"] = { line = params.hover[1], character = params.hover[2] } },
    context = { diagnostics = {} } }, limit()))
  out.code_actions = {}
  for _, action in ipairs(actions or {}) do
    table.insert(out.code_actions, { title = action.title,
      command = action.command and (action.command.command or action.command) })
  end

  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_buf_set_lines(0, last, last, false, { params.completion_line })
  local labels = {}
  vim.wait(limit(), function()
    local result = first_result(vim.lsp.buf_request_sync(0, "textDocument/completion",
      position(last, #params.completion_line), limit()))
    labels = {}
    for _, item in ipairs(result and (result.items or result) or {}) do
      table.insert(labels, item.label)
      out.completion_detail = item.detail
    end
    return #labels > 0
  end, 100)
  out.completion = labels

  vim.cmd("CitelspExportReport json")
  out.report_written = vim.wait(limit(), function()
    return vim.loop.fs_stat(params.report) ~= nil
  end, 50)

  local opened = first_result(vim.lsp.buf_request_sync(0, "workspace/executeCommand", {
    command = "citelsp.openUrl", arguments = { params.url } }, limit()))
  out.open_url = opened
  vim.wait(limit(), function() return vim.loop.fs_stat(params.opener_log) ~= nil end, 50)

  -- Without xdg-open the link is kept in a register and the writer told what to install.
  local search_path = vim.env.PATH
  vim.env.PATH = params.empty_dir
  out.open_without_opener = first_result(vim.lsp.buf_request_sync(0, "workspace/executeCommand", {
    command = "citelsp.openUrl", arguments = { params.url } }, limit()))
  vim.env.PATH = search_path
  out.unnamed_register = vim.fn.getreg('"')

  -- "Create an entry…" offline: the plugin's command, as the code action runs it.
  local seen = #_G.citelsp_probe.messages + #_G.citelsp_probe.notifications
  vim.lsp.commands["citelsp.createEntry"]({ command = "citelsp.createEntry",
    arguments = { vim.uri_from_bufnr(0), "absent", params.new_doi } },
    { bufnr = 0, client_id = client.id })
  vim.wait(limit(), function()
    return #_G.citelsp_probe.messages + #_G.citelsp_probe.notifications > seen
  end, 50)
  vim.wait(300)
  out.messages = _G.citelsp_probe.messages
  out.notifications = _G.citelsp_probe.notifications

  -- Quarto and R Markdown documents: a filetype, the client attached, a dangling citation
  -- found and no citation read from a code chunk.
  out.others = {}
  for _, file in ipairs(params.others) do
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    local seen = { filetype = vim.bo.filetype, codes = {} }
    seen.attached = vim.wait(limit(), function() return citelsp_client() ~= nil end, 50)
    vim.wait(limit(), dangling, 50)
    for _, d in ipairs(vim.diagnostic.get(0)) do
      table.insert(seen.codes, code_of(d) .. " " .. d.lnum)
    end
    out.others[vim.fn.fnamemodify(file, ":t")] = seen
  end
  vim.cmd("buffer " .. vim.fn.bufnr("paper.md"))

  vim.cmd("CitelspChecklist")
  vim.wait(limit(), function()
    return vim.endswith(vim.api.nvim_buf_get_name(0), "checklist.md")
  end, 50)
  out.checklist_buffer = vim.api.nvim_buf_get_name(0)

  vim.cmd("buffer " .. vim.fn.bufnr("paper.md"))
  vim.cmd("checkhealth citelsp")
  out.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local ok, err = pcall(probe)
out.error = (not ok) and tostring(err) or vim.NIL
vim.fn.writefile({ vim.fn.json_encode(out) }, params.output)
vim.cmd("qa!")
"""


def _line_col(text: str, needle: str) -> tuple[int, int]:
    before = text[: text.index(needle)]
    return before.count("\n"), len(before) - (before.rfind("\n") + 1)


@pytest.fixture(scope="module")
def probe_result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One Neovim session for the whole module; each test reads a part of what it saw."""
    tmp_path = tmp_path_factory.mktemp("neovim")
    workspace = tmp_path / "workspace"
    (workspace / ".citelsp").mkdir(parents=True)
    paper_dir = workspace / "paper"
    paper_dir.mkdir()
    (paper_dir / "paper.md").write_text(PAPER, encoding="utf-8")
    (paper_dir / "refs.bib").write_text(REFS, encoding="utf-8")
    for name, text in OTHERS.items():
        (paper_dir / name).write_text(text, encoding="utf-8")

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "no-programs").mkdir()
    opener = bin_dir / "xdg-open"
    opened_log = shlex.quote(str(tmp_path / "opened.txt"))
    opener.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened_log}\n', encoding="utf-8")
    opener.chmod(0o755)

    env_for_server = {"CITELSP_OFFLINE": "1", "CITELSP_CACHE_DIR": str(tmp_path / "cache")}
    output = tmp_path / "probe.json"
    params = {
        "plugin": str(PLUGIN),
        "cmd": [sys.executable, "-m", "citelsp"],
        "env": env_for_server,
        "settings": SETTINGS,
        "output": str(output),
        "wait_ms": 20000,
        "budget_ms": 60000,
        "hover": _line_col(PAPER, "he2016deep]"),
        "mixed_line": _line_col(PAPER, "absent]")[0],
        "completion_line": "Completion [@",
        "others": [str(paper_dir / name) for name in OTHERS],
        "report": str(workspace / ".citelsp" / "report.json"),
        "url": DOI_URL,
        "opener_log": str(tmp_path / "opened.txt"),
        "empty_dir": str(tmp_path / "no-programs"),
        "new_doi": "10.1038/nature14539",
    }
    (tmp_path / "params.json").write_text(json.dumps(params), encoding="utf-8")
    (tmp_path / "init.lua").write_text(INIT, encoding="utf-8")
    (tmp_path / "probe.lua").write_text(PROBE, encoding="utf-8")

    env = {**os.environ, **env_for_server, "CITELSP_PROBE": str(tmp_path / "params.json"),
           "CITELSP_PROBE_LUA": str(tmp_path / "probe.lua"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(tmp_path / "init.lua"),
         "-c", "lua dofile(os.getenv('CITELSP_PROBE_LUA'))", "paper/paper.md"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )
    assert output.exists(), f"nvim wrote no result (exit {proc.returncode}): {proc.stderr}"
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["error"] is None, result["error"]
    result["workspace"] = str(workspace)
    opened = tmp_path / "opened.txt"
    result["opened_externally"] = opened.read_text(encoding="utf-8") if opened.exists() else None
    return result


def test_neovim_shows_diagnostics_hover_and_completion(probe_result: dict) -> None:
    assert probe_result["filetype"] == "markdown"
    assert probe_result["attached"] is True
    assert Path(probe_result["root_dir"]) == Path(probe_result["workspace"])

    assert probe_result["got_diagnostics"] is True, probe_result["diagnostics"]
    line, col = _line_col(PAPER, "missing]")
    dangling = [d for d in probe_result["diagnostics"]
                if d["code"] == "DANGLING_CITATION" and d["lnum"] == line]
    assert dangling == [{
        "code": "DANGLING_CITATION", "lnum": line, "col": col, "end_lnum": line,
        "end_col": col + len("missing"), "severity": 1, "source": "citelsp",
    }]

    hover = probe_result["hover"]
    assert hover["kind"] == ("markdown" if probe_result["renders_markdown"] else "plaintext")
    assert "Deep Residual Learning for Image Recognition" in hover["value"]
    assert "he2016deep" in hover["value"]

    assert probe_result["completion"] == ["he2016deep"]
    assert probe_result["completion_detail"] == "He et al. (2016)"  # listed: never resolved

    titles = {a["title"]: a["command"] for a in probe_result["code_actions"]}
    assert titles["Search Crossref for this title"] == "citelsp.openUrl"
    assert titles["Search Google Scholar for this title"] == "citelsp.openUrl"

    request = probe_result["configuration"][0]
    assert request["items"] == [{"section": "citelsp"}]
    assert request["response"] == [SETTINGS]


def test_neovim_runs_commands_and_opens_documents(probe_result: dict) -> None:
    workspace = Path(probe_result["workspace"])
    assert probe_result["report_written"] is True
    report = json.loads((workspace / ".citelsp" / "report.json").read_text(encoding="utf-8"))
    assert any(d["code"] == "DANGLING_CITATION" for d in report["diagnostics"])

    assert probe_result.get("open_url") == {"opened": DOI_URL, "success": True}
    assert probe_result["opened_externally"] == DOI_URL

    assert Path(probe_result["checklist_buffer"]) == workspace / ".citelsp" / "checklist.md"


def test_neovim_checkhealth_reports_server_version_and_bibliographies(
        probe_result: dict) -> None:
    report = "\n".join(probe_result["health"])
    assert "citelsp: server" in report
    assert f"version: {__version__}" in report
    assert "xdg-open: " in report  # the stand-in on PATH
    assert "ERROR" not in report, report
    workspace = Path(probe_result["workspace"])
    assert "named by paper.md:" in report
    assert str(workspace / "paper" / "refs.bib") in report
    assert f"for {workspace}" in report


def test_neovim_before_0_10_gets_a_plain_text_hover_card(probe_result: dict) -> None:
    """Neovim 0.7–0.9 shows Markdown tables and backticks as typed: the plugin asks for plain
    text there, and the card the writer sees has neither."""
    if probe_result["renders_markdown"]:
        pytest.skip("Neovim 0.10+ renders the Markdown card")
    window = probe_result["hover_window"]
    assert window and "Deep Residual Learning for Image Recognition." in window
    assert any(line.startswith("Verification: ") for line in window), window
    text = "\n".join(window)
    for markup in ("|---", "| source", "`", "**"):
        assert markup not in text, window


def test_neovim_error_wins_over_an_information_on_the_same_line(probe_result: dict) -> None:
    """A P0 DANGLING_CITATION and a P2 on one line: the Error's sign and message show."""
    assert probe_result["mixed_got"] is True
    assert probe_result["mixed_signs"][0] == "DiagnosticSignError", probe_result["mixed_signs"]
    assert "'absent' is not in any bibliography" in probe_result["mixed_virtual_text"][-1]


def test_neovim_link_without_xdg_open_goes_to_a_register(probe_result: dict) -> None:
    assert probe_result["open_without_opener"] == {"opened": DOI_URL, "success": False}
    assert probe_result["unnamed_register"] == DOI_URL
    told = [n for n in probe_result["notifications"] if "xdg-open" in n]
    assert told and "xdg-utils" in told[0] and DOI_URL in told[0], probe_result["notifications"]


def test_neovim_create_entry_offline_says_why_in_a_sentence(probe_result: dict) -> None:
    said = probe_result["messages"] + probe_result["notifications"]
    assert not [m for m in said if "ValueError" in m or "Traceback" in m], said
    why = [m for m in probe_result["messages"] if "no entry was created for 'absent'" in m]
    assert why and "10.1038/nature14539" in why[0] and "offline" in why[0], said


def test_neovim_checks_quarto_and_r_markdown(probe_result: dict) -> None:
    """Neovim 0.7 gives .qmd no filetype: the plugin sets ``quarto`` so the client attaches."""
    others = probe_result["others"]
    assert others["chapter.qmd"]["filetype"] == "quarto"
    assert others["notes.Rmd"]["filetype"] == "rmd"
    for name, seen in others.items():
        assert seen["attached"] is True, name
        assert seen["codes"].count("DANGLING_CITATION 9") == 1, (name, seen)
        # Nothing from the code chunk (lines 6-8): only the prose line has diagnostics.
        assert all(code.endswith(" 9") for code in seen["codes"]), (name, seen)
