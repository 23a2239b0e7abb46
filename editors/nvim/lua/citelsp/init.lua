-- citelsp for Neovim 0.7+: starts the citelsp language server for manuscripts and
-- bibliographies. Install editors/nvim with a plugin manager (see editors/nvim/README.md), then
--
--   require("citelsp").setup({ settings = { mailto = "me@example.org" } })
--
-- Neovim 0.11+ registers the server with vim.lsp.config and vim.lsp.enable; 0.8–0.10 start it
-- with vim.lsp.start; 0.7 with vim.lsp.start_client, which is all it has. One client runs per
-- project root: the nearest folder above the file holding one of `root_markers`, else the
-- file's own folder.

local M = {}

M.defaults = {
  name = "citelsp",
  cmd = { "citelsp" },
  cmd_env = nil,
  filetypes = { "markdown", "quarto", "rmd", "rnoweb", "tex", "plaintex", "bib", "json", "yaml" },
  root_markers = { ".git", ".citelsp" },
  settings = {},
  on_attach = nil,
  capabilities = nil,
  flags = { debounce_text_changes = 150 },
  -- "plaintext" or "markdown": the hover card's format. Before 0.10 Neovim shows Markdown
  -- tables and backticks as typed, so the card comes as plain text there.
  hover_format = nil,
  -- vim.diagnostic.config() for citelsp's diagnostics only: an Error sorts above an
  -- Information on the same line (its sign and virtual text win). false leaves Neovim's own.
  diagnostics = { severity_sort = true },
}

-- Neovim filetypes are not LSP language ids; the server reads these.
local LANGUAGE_IDS = { tex = "latex", plaintex = "latex", rnoweb = "latex", bib = "bibtex" }

local config = nil
local clients = {} -- root folder -> client id (Neovim 0.7 only)

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

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

-- A link the system cannot open goes to the clipboard (register +) or, without one, to the
-- unnamed register, and the writer is told where it is and what to install.
local function keep_link(uri, why)
  local register = vim.fn.has("clipboard") == 1 and "+" or '"'
  vim.fn.setreg(register, uri)
  vim.notify(string.format("citelsp: %s; the link is in register %s: %s", why, register, uri),
    vim.log.levels.WARN)
end

local function open_external(uri)
  local argv, install
  if vim.fn.has("mac") == 1 then
    argv = { "open", uri }
  elseif vim.fn.has("win32") == 1 then
    argv = { "cmd.exe", "/c", "start", "", uri }
  else
    argv, install = { "xdg-open", uri }, " (install xdg-utils: sudo apt install xdg-utils)"
  end
  if vim.fn.executable(argv[1]) ~= 1 then
    keep_link(uri, "cannot open links: no " .. argv[1] .. (install or ""))
    return false
  end
  local ok, job = pcall(vim.fn.jobstart, argv, {
    detach = true,
    on_exit = function(_, code)
      if code ~= 0 then
        keep_link(uri, argv[1] .. " could not open the link (exit " .. code .. ")")
      end
    end,
  })
  if not (ok and job > 0) then
    keep_link(uri, argv[1] .. " did not start")
    return false
  end
  return true
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

--- The options setup() was given, merged over the defaults.
function M.options()
  return config or M.defaults
end

--- The client configuration without a root: what vim.lsp.config takes on Neovim 0.11+.
function M.lsp_config()
  local opts = M.options()
  local capabilities = opts.capabilities or vim.lsp.protocol.make_client_capabilities()
  capabilities = vim.tbl_deep_extend("force", capabilities, {
    -- Neovim 0.7 answers workspace/configuration from `settings` but does not announce it.
    workspace = { configuration = true },
    window = { showDocument = { support = true } },
    -- The "create the entry" code action may leave the DOI out: we ask for it (below).
    experimental = { citelspPromptsForIdentifier = true },
  })
  local hover_format = opts.hover_format or (has("0.10") and "markdown" or "plaintext")
  capabilities.textDocument = capabilities.textDocument or {}
  capabilities.textDocument.hover = vim.tbl_extend("force", capabilities.textDocument.hover or {},
    { contentFormat = { hover_format, hover_format == "markdown" and "plaintext" or "markdown" } })
  local handlers = {}
  if vim.lsp.handlers["window/showDocument"] == nil then
    handlers["window/showDocument"] = show_document
  end
  return {
    name = opts.name,
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = as_object(opts.settings),
    settings = { citelsp = as_object(opts.settings) },
    capabilities = capabilities,
    flags = opts.flags,
    get_language_id = function(_, filetype)
      return LANGUAGE_IDS[filetype] or filetype
    end,
    handlers = handlers,
    on_init = function(client)
      if opts.diagnostics then
        local ok, namespace = pcall(vim.lsp.diagnostic.get_namespace, client.id)
        if ok and namespace then
          vim.diagnostic.config(opts.diagnostics, namespace)
        end
      end
    end,
    on_attach = opts.on_attach,
  }
end

local function client_config(root)
  local client = M.lsp_config()
  client.root_dir = root
  client.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
  return client
end

--- Attaches `bufnr` to the citelsp client of its project, starting the client if needed.
--- Returns the client id, or nil for buffers that are not files.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == "" or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local root = M.find_root(path, M.options().root_markers)
  if vim.lsp.start then
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
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

--- The citelsp client attached to `bufnr`, if any.
function M.client(bufnr)
  local name = M.options().name
  local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
    or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(attached) do
    if client.name == name then
      return client
    end
  end
  return nil
end

--- Runs a citelsp command (`citelsp.reverify`, ...) on the current buffer's server.
function M.execute(command, arguments, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    vim.notify("citelsp is not attached to this buffer", vim.log.levels.WARN)
    return
  end
  local params = { command = command, arguments = arguments }
  local function done(err, result)
    if err then
      vim.notify(command .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end
  if has("0.11") then
    client:request("workspace/executeCommand", params, done, bufnr)
  else
    client.request("workspace/executeCommand", params, done, bufnr)
  end
end

--- The "create an entry for KEY from a DOI or arXiv id…" code action: asks for the id,
--- then lets the server look it up and add the entry (it sends the edit to apply).
local function create_entry(command, ctx)
  local args = command.arguments or {}
  local function run(identifier)
    if not identifier or vim.trim(identifier) == "" then
      return
    end
    M.execute(command.command, { args[1], args[2], vim.trim(identifier) }, function(result)
      if result and result.applied then
        vim.notify("citelsp: added '" .. args[2] .. "' to " .. result.uri, vim.log.levels.INFO)
      end
    end)
  end
  if #args >= 3 then
    return run(args[3])
  end
  vim.ui.input({ prompt = "DOI or arXiv id for '" .. tostring(args[2]) .. "': " }, run)
end

local function define_commands()
  vim.lsp.commands["citelsp.createEntry"] = create_entry
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
  config = vim.tbl_extend("force", M.defaults, opts or {})
  define_commands()
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config(config.name, M.lsp_config())
    vim.lsp.enable(config.name)
    return
  end
  local group = vim.api.nvim_create_augroup("citelsp", { clear = true })
  -- Neovim before 0.9 has no filetype for Quarto: .qmd files got none, so no FileType event.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = group,
    pattern = "*.qmd",
    callback = function(args)
      if vim.bo[args.buf].filetype == "" then
        vim.bo[args.buf].filetype = "quarto"
        vim.bo[args.buf].syntax = "markdown"
      end
    end,
  })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
        and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
end

return M
