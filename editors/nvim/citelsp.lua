-- citelsp for Neovim 0.7+: starts the citelsp language server for manuscripts and
-- bibliographies with vim.lsp.start_client (vim.lsp.start only exists from 0.8 on).
--
--   dofile("/path/to/citelsp/editors/nvim/citelsp.lua").setup({
--     settings = { mailto = "me@example.org" },
--   })
--
-- (or copy this file to ~/.config/nvim/lua/citelsp.lua and use require("citelsp")).
--
-- One client runs per project root: the nearest folder above the file holding one of
-- `root_markers`, else the file's own folder.

local M = {}

local defaults = {
  name = "citelsp",
  cmd = { "citelsp" },
  cmd_env = nil,
  filetypes = { "markdown", "tex", "plaintex", "bib", "json" },
  root_markers = { ".git", ".citelsp" },
  settings = {},
  on_attach = nil,
  capabilities = nil,
  flags = { debounce_text_changes = 150 },
}

-- Neovim filetypes are not LSP language ids; the server reads these.
local LANGUAGE_IDS = { tex = "latex", plaintex = "latex", bib = "bibtex" }

local config = nil
local clients = {} -- root folder -> client id

-- An empty Lua table encodes as a JSON array; the server expects an object.
local function as_object(value)
  if type(value) == "table" and vim.tbl_isempty(value) then
    return vim.empty_dict()
  end
  return value
end

--- The project root of `path`: the nearest ancestor holding a root marker, else its folder.
function M.find_root(path, markers)
  local start = vim.fn.fnamemodify(path, ":p:h")
  local dir = start
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return start
    end
    dir = parent
  end
end

local function open_external(uri)
  local argv
  if vim.fn.has("mac") == 1 then
    argv = { "open", uri }
  elseif vim.fn.has("win32") == 1 then
    argv = { "cmd.exe", "/c", "start", "", uri }
  else
    argv = { "xdg-open", uri }
  end
  local ok, job = pcall(vim.fn.jobstart, argv, { detach = true })
  return ok and job > 0
end

-- Neovim 0.7 has no window/showDocument handler. The server sends only allowlisted https
-- links (citelsp.openUrl) and its own report files (citelsp.showChecklist).
local function show_document(_, params)
  if params.external then
    if not vim.startswith(params.uri, "https://") then
      return { success = false }
    end
    return { success = open_external(params.uri) }
  end
  local ok = pcall(vim.cmd, "split " .. vim.fn.fnameescape(vim.uri_to_fname(params.uri)))
  if ok and params.selection then
    local start = params.selection.start
    pcall(vim.api.nvim_win_set_cursor, 0, { start.line + 1, start.character })
  end
  return { success = ok }
end

local function client_config(root)
  local capabilities = config.capabilities or vim.lsp.protocol.make_client_capabilities()
  capabilities = vim.tbl_deep_extend("force", capabilities, {
    -- Neovim 0.7 answers workspace/configuration from `settings` but does not announce it.
    workspace = { configuration = true },
    window = { showDocument = { support = true } },
  })
  return {
    name = config.name,
    cmd = config.cmd,
    cmd_env = config.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = as_object(config.settings),
    settings = { citelsp = as_object(config.settings) },
    capabilities = capabilities,
    flags = config.flags,
    get_language_id = function(_, filetype)
      return LANGUAGE_IDS[filetype] or filetype
    end,
    handlers = { ["window/showDocument"] = show_document },
    on_attach = config.on_attach,
  }
end

--- Attaches `bufnr` to the citelsp client of its project, starting the client if needed.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = vim.api.nvim_buf_get_name(bufnr)
  if config == nil or path == "" or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local root = M.find_root(path, config.root_markers)
  local client = clients[root] and vim.lsp.get_client_by_id(clients[root])
  if not client or client.is_stopped() then
    local id = vim.lsp.start_client(client_config(root))
    if not id then
      return nil
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, clients[root])
  return clients[root]
end

local function buffer_client(bufnr)
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == config.name then
      return client
    end
  end
  return nil
end

--- Runs a citelsp command (`citelsp.reverify`, ...) on the current buffer's server.
function M.execute(command, arguments, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = config and buffer_client(bufnr)
  if not client then
    vim.notify("citelsp is not attached to this buffer", vim.log.levels.WARN)
    return
  end
  client.request("workspace/executeCommand", { command = command, arguments = arguments },
    function(err, result)
      if err then
        vim.notify(command .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      elseif on_result then
        on_result(result)
      end
    end, bufnr)
end

local function define_commands()
  local function report(key)
    return function(result)
      if result and result[key] ~= nil then
        vim.notify("citelsp: " .. key .. " " .. tostring(result[key]), vim.log.levels.INFO)
      end
    end
  end
  vim.api.nvim_create_user_command("CitelspReverify", function(cmd)
    M.execute("citelsp.reverify", cmd.fargs, report("queued"))
  end, { nargs = "*", desc = "citelsp: verify the given keys (or all) again, bypassing the cache" })
  vim.api.nvim_create_user_command("CitelspClearCache", function()
    M.execute("citelsp.clearCache", {}, report("cleared"))
  end, { desc = "citelsp: clear the lookup cache" })
  vim.api.nvim_create_user_command("CitelspChecklist", function()
    M.execute("citelsp.showChecklist", {})
  end, { desc = "citelsp: write and open the human-check checklist" })
  vim.api.nvim_create_user_command("CitelspExportReport", function(cmd)
    M.execute("citelsp.exportReport", { cmd.args ~= "" and cmd.args or "json" }, report("uri"))
  end, {
    nargs = "?",
    complete = function()
      return { "text", "json", "sarif", "markdown", "ars", "ledger" }
    end,
    desc = "citelsp: write a report under .citelsp/",
  })
end

--- Configures citelsp: opts override `defaults` key by key (`settings` is the `citelsp`
--- section, with the camelCase keys the server documents).
function M.setup(opts)
  config = vim.tbl_extend("force", defaults, opts or {})
  local group = vim.api.nvim_create_augroup("citelsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  define_commands()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
        and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
end

return M
