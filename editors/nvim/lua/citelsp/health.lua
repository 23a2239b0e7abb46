-- :checkhealth citelsp — the server's path and version, the running clients, and the
-- bibliographies the current project would use.

local M = {}

-- vim.health (0.8+; start/ok/... from 0.10) or the 0.7 `health` module (report_*).
local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

local MAX_LISTED = 20

local function server(opts)
  start("citelsp: server")
  local program = opts.cmd[1]
  local path = vim.fn.exepath(program)
  if path == "" then
    error(("'%s' is not an executable on PATH"):format(program), {
      "pipx install /path/to/citelsp (citelsp is not on PyPI yet: install it from a checkout)",
      'or point `cmd` at it: setup({ cmd = { "/path/to/venv/bin/python", "-m", "citelsp" } })',
    })
    return
  end
  ok(("server: %s"):format(path))
  local argv = vim.list_extend(vim.deepcopy(opts.cmd), { "--version" })
  local output = vim.fn.system(argv)
  local version = output:match("citelsp%s+(%S+)")
  if vim.v.shell_error == 0 and version then
    ok(("version: %s"):format(version))
  else
    error(("'%s --version' failed: %s"):format(table.concat(opts.cmd, " "), vim.trim(output)))
  end
end

local function clients(opts)
  start("citelsp: clients")
  local running = vim.lsp.get_clients and vim.lsp.get_clients({ name = opts.name })
    or vim.tbl_filter(function(client)
      return client.name == opts.name
    end, vim.lsp.get_active_clients())
  if #running == 0 then
    info("no citelsp client is running yet: one starts, within a few seconds, when a "
      .. "manuscript or a bibliography is opened")
  end
  for _, client in ipairs(running) do
    ok(("client %d for %s"):format(client.id, client.config.root_dir or "?"))
  end
end

local function head(path, bytes)
  local file = io.open(path, "r")
  if not file then
    return ""
  end
  local text = file:read(bytes) or ""
  file:close()
  return text
end

-- A JSON file is a bibliography only if it holds CSL items (objects with `id` and `type`).
local function looks_like_csl(path)
  local text = head(path, 4096)
  return text:match("^%s*[%[{]") ~= nil and text:find('"id"', 1, true) ~= nil
    and text:find('"type"', 1, true) ~= nil
end

-- Bibliographies a manuscript names itself: front matter `bibliography:`, \bibliography{},
-- \addbibresource{}. Only the first lines are read; the server reads the whole file.
local function named_by(bufnr)
  local named = {}
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, 200, false)) do
    local front = line:match("^bibliography:%s*(.-)%s*$")
    if front and front ~= "" then
      table.insert(named, (front:gsub("^[\"']", ""):gsub("[\"']$", "")))
    end
    for command, names in line:gsub("%b[]", ""):gmatch("\\(%a+){([^}]*)}") do
      if command == "bibliography" or command == "addbibresource" then
        for name in names:gmatch("[^,%s]+") do
          table.insert(named, (command == "bibliography" and not name:match("%.bib$"))
            and name .. ".bib" or name)
        end
      end
    end
  end
  return named
end

local function listed(root, files)
  for i, file in ipairs(files) do
    if i > MAX_LISTED then
      info(("... and %d more"):format(#files - MAX_LISTED))
      return
    end
    local path = file:sub(1, 1) == "/" and file or (root .. "/" .. file)
    if vim.loop.fs_stat(path) then
      ok(path)
    else
      warn(("%s does not exist"):format(path))
    end
  end
end

-- The manuscript or bibliography used last (:checkhealth runs in a buffer of its own).
local function last_document(opts)
  local infos = vim.fn.getbufinfo({ buflisted = 1 })
  table.sort(infos, function(a, b)
    return a.lastused > b.lastused
  end)
  for _, buf in ipairs(infos) do
    if buf.name ~= "" and vim.tbl_contains(opts.filetypes, vim.bo[buf.bufnr].filetype) then
      return buf.bufnr
    end
  end
  return nil
end

local function bibliographies(opts)
  local bufnr = last_document(opts)
  local name = bufnr and vim.api.nvim_buf_get_name(bufnr) or ""
  local root = require("citelsp").find_root(name ~= "" and name or vim.fn.getcwd() .. "/x",
    opts.root_markers)
  start(("citelsp: bibliographies (project %s)"):format(root))
  local named = bufnr and named_by(bufnr) or {}
  if #named > 0 then
    info(("named by %s:"):format(vim.fn.fnamemodify(name, ":t")))
    local folder = vim.fn.fnamemodify(name, ":p:h")
    listed(folder, named)
    return
  end
  local configured = opts.settings and opts.settings.bibliography
  if type(configured) == "string" then
    configured = { configured }
  end
  if configured and #configured > 0 then
    info("from settings.bibliography:")
    listed(root, configured)
    return
  end
  local found = vim.fn.globpath(root, "**/*.bib", false, true)
  for _, path in ipairs(vim.fn.globpath(root, "**/*.json", false, true)) do
    if looks_like_csl(path) then
      table.insert(found, path)
    end
  end
  if #found == 0 then
    warn("no .bib or CSL-JSON file in the project: every citation will dangle", {
      "add a bibliography, name it in the manuscript, or set settings.bibliography",
    })
    return
  end
  info("every .bib and CSL-JSON file in the project (no manuscript names one):")
  listed(root, found)
end

-- The program "open the DOI" and the other link actions hand links to (Linux and BSD).
local function opener()
  if vim.fn.has("mac") == 1 or vim.fn.has("win32") == 1 then
    return
  end
  start("citelsp: links")
  local path = vim.fn.exepath("xdg-open")
  if path ~= "" then
    ok(("xdg-open: %s"):format(path))
  else
    warn("no xdg-open: the link actions put the link in a register (+, or \" without a "
      .. "clipboard) instead of opening it", { "sudo apt install xdg-utils" })
  end
end

function M.check()
  local opts = require("citelsp").options()
  server(opts)
  opener()
  clients(opts)
  bibliographies(opts)
end

return M
