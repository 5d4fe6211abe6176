--- agentls for Neovim: starts the agentls language server on the buffers of a
--- workspace, renders its approval requests as diffs, applies and saves the
--- edits a person approved, and lets agent front-ends list and call its tools.
---
---   require("agentls").setup({ cmd = { "/path/to/agentls" } })
---   require("agentls").list(function(tools, err) ... end)
---   require("agentls").call("read_file", { path = "main.go" }, function(result, err) ... end)
---
--- See editors/nvim/README.md and the protocol (docs/ in the repository).
local M = {}

local api = vim.api

--- @class agentls.Config
M.defaults = {
  --- The server command: a list (argv), a string (one program), or a function
  --- as vim.lsp.start accepts (e.g. vim.lsp.rpc.connect("127.0.0.1", 7700)).
  cmd = { "agentls" },
  cmd_env = nil,
  --- Files or folders that mark a workspace root (nearest one upward wins).
  root_markers = { ".agentls.json", ".git", ".hg", ".jj", "go.mod", "package.json", "Cargo.toml", "pyproject.toml" },
  --- A fixed root (string) or function(bufnr) -> root|nil, tried before the markers.
  root_dir = nil,
  --- Attach to every file buffer as it is read or created.
  autostart = true,
  --- nil: every file buffer; or a list of filetypes to attach to.
  filetypes = nil,
  --- Filetypes never attached.
  exclude_filetypes = {},
  --- initializationOptions: { config = {...}, model = { name = "..." }, agent = "name" }
  init_options = nil,
  --- Sent as workspace/didChangeConfiguration settings.agentls (same shape as the config file).
  settings = nil,
  --- Save the buffers an approved edit touched that were unmodified before it.
  save_after_apply = true,
  approval = {
    --- "tab": a tab with the current and proposed text in diff mode;
    --- "float": a floating window with the unified diff. Requests without a
    --- file preview (commands, fetches) always use a float.
    ui = "tab",
    --- The keys of a review, in its own tab or float only. The answering
    --- ones are prefixed (<LocalLeader>, "\\" unless you set
    --- maplocalleader) so that no motion, search repeat or operator typed
    --- out of habit (n, e, y, a, ...) answers a review.
    keys = {
      approve = "<LocalLeader>y",
      reject = "<LocalLeader>n",
      always = "<LocalLeader>A",
      edit = "<LocalLeader>e",
      help = "g?",
      hide = "q",
      next_file = "]f",
      prev_file = "[f",
    },
    --- Ask for an optional message when rejecting.
    reject_message = true,
    --- Answering keys typed within this many ms of the review opening are
    --- ignored (they were meant for the buffer underneath).
    guard_ms = 400,
    --- false: a review that arrives opens in its own tab (or float) without
    --- taking the cursor: go there with :AgentlsReviews (or gt). true: it
    --- takes the cursor once you are back in normal mode.
    focus = false,
    --- Answers that cannot be taken back (always; approving a dangerous
    --- call) ask a second time: you type the word shown ("always", "yes").
    confirm_irreversible = true,
  },
  log = {
    max_lines = 10000,
    --- Also echo tool/event lines with vim.notify at this level (nil: never).
    notify_level = nil,
  },
  on_attach = nil,
  capabilities = nil,
  flags = { debounce_text_changes = 150 },
}

--- @type agentls.Config
M.config = vim.deepcopy(M.defaults)

local log = require("agentls.log")
local commands = require("agentls.commands")

-- Client methods are closures in 0.10 (client.request(...)) and methods from
-- 0.11 on (client:request(...), the dot form deprecated).
local has_011 = vim.fn.has("nvim-0.11") == 1
local function cm(client, name, ...)
  if has_011 then
    return client[name](client, ...)
  end
  return client[name](...)
end
M.client_method = cm

-- serverInfo of each client's initialize result, by client id (Neovim 0.10
-- does not keep it on the client).
local init_infos = {}

--- The serverInfo ({name, version}) agentls answered initialize with.
--- @param client table
--- @return table
function M.initialize_info(client)
  return init_infos[client.id] or {}
end

local setup_done = false
local missing_notified = false

local function is_list(t)
  return type(t) == "table" and vim.islist(t)
end

--- The command as a list, a function, or nil with a message.
--- @return string[]|function|nil, string?
function M.resolve_cmd()
  local cmd = M.config.cmd
  if type(cmd) == "function" then
    return cmd
  end
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if not is_list(cmd) or #cmd == 0 or type(cmd[1]) ~= "string" then
    return nil, "agentls: `cmd` must be a list like { \"/path/to/agentls\" } (got " .. vim.inspect(M.config.cmd) .. ")"
  end
  local prog = vim.fn.expand(cmd[1])
  if vim.fn.executable(prog) ~= 1 then
    return nil,
      string.format(
        "agentls: the server binary %q was not found or is not executable. "
          .. 'Build it with "go build -o bin/agentls ./cmd/agentls" in the agentls repository and set '
          .. 'require("agentls").setup({ cmd = { "/path/to/bin/agentls" } }). See :checkhealth agentls.',
        cmd[1]
      )
  end
  local out = vim.deepcopy(cmd)
  -- Absolute, so the server starts whatever the root (a relative path or a name on PATH).
  out[1] = vim.fn.exepath(prog) ~= "" and vim.fn.exepath(prog) or prog
  return out
end

--- @param bufnr integer
--- @return boolean
function M.eligible(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local ft = vim.bo[bufnr].filetype
  if vim.tbl_contains(M.config.exclude_filetypes or {}, ft) then
    return false
  end
  if M.config.filetypes and not vim.tbl_contains(M.config.filetypes, ft) then
    return false
  end
  return true
end

local function normalize_dir(dir)
  dir = vim.fs.normalize(vim.fn.fnamemodify(dir, ":p"))
  if #dir > 1 then
    dir = dir:gsub("/+$", "")
  end
  return dir
end

--- The workspace root of a buffer: root_dir, else the nearest marker, else
--- the current directory when the file is under it, else the file's folder.
--- @param bufnr integer?
--- @return string
function M.root_for(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local rd = M.config.root_dir
  if type(rd) == "function" then
    local r = rd(bufnr)
    if r then
      return normalize_dir(r)
    end
  elseif type(rd) == "string" then
    return normalize_dir(rd)
  end
  local name = api.nvim_buf_is_valid(bufnr) and api.nvim_buf_get_name(bufnr) or ""
  if name ~= "" and not name:match("^%a[%w+.-]*://") then
    local root = vim.fs.root(name, M.config.root_markers)
    if root then
      return normalize_dir(root)
    end
  end
  local cwd = normalize_dir(vim.fn.getcwd())
  if name == "" or vim.startswith(name, cwd .. "/") then
    return cwd
  end
  return normalize_dir(vim.fs.dirname(name))
end

--- The client capabilities agentls reads (docs/protocol.md, "Starting a session").
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps = vim.tbl_deep_extend("force", caps, M.config.capabilities or {})
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.workspaceEdit = vim.tbl_deep_extend("force", caps.workspace.workspaceEdit or {}, {
    documentChanges = true,
    resourceOperations = { "create", "rename", "delete" },
  })
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.experimental = caps.experimental or {}
  caps.experimental.agentls = {
    approvalRequest = true,
    saveAfterApply = M.config.save_after_apply and true or false,
    nativePreview = false,
  }
  return caps
end

local function handlers()
  local events = require("agentls.events")
  return {
    ["approval/request"] = require("agentls.approval").handler,
    ["workspace/applyEdit"] = require("agentls.edit").handler,
    ["tool/event"] = events.on_event,
    ["$/progress"] = events.on_progress,
  }
end

--- The vim.lsp client config for a root.
--- @param root string
--- @return table?, string?
function M.client_config(root)
  local cmd, err = M.resolve_cmd()
  if not cmd then
    return nil, err
  end
  local init_options = M.config.init_options
  if init_options ~= nil and type(init_options) == "table" and next(init_options) == nil then
    init_options = nil
  end
  return {
    name = "agentls",
    cmd = cmd,
    cmd_env = M.config.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = M.capabilities(),
    handlers = handlers(),
    init_options = init_options,
    settings = M.config.settings and { agentls = M.config.settings } or nil,
    flags = M.config.flags,
    on_attach = function(client, bufnr)
      -- Right after the buffer's didOpen: follow its document versions.
      require("agentls.versions").track(bufnr)
      local user = M.config.on_attach
      if type(user) == "function" then
        user(client, bufnr)
      elseif type(user) == "table" then
        for _, f in ipairs(user) do
          f(client, bufnr)
        end
      end
    end,
    on_init = function(client, result)
      local info = result and result.serverInfo or {}
      init_infos[client.id] = info
      log.append(string.format("started %s %s for %s", info.name or "agentls", info.version or "", root))
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        log.append(string.format("server exited (code %s, signal %s)", tostring(code), tostring(signal)))
        init_infos[client_id] = nil
        require("agentls.approval").drop_client(client_id)
      end)
    end,
  }
end

local function notify_missing(err)
  if not missing_notified then
    missing_notified = true
    vim.notify(err, vim.log.levels.ERROR)
  end
  log.append(err)
end

--- Attaches agentls to a buffer (starting the server for its root when needed).
--- @param bufnr integer?
--- @return integer? client_id
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not M.eligible(bufnr) then
    return nil
  end
  local root = M.root_for(bufnr)
  local config, err = M.client_config(root)
  if not config then
    notify_missing(err)
    return nil
  end
  return vim.lsp.start(config, { bufnr = bufnr, silent = false })
end

--- The running agentls clients.
--- @param filter table? vim.lsp.get_clients filter
function M.clients(filter)
  local f = vim.tbl_extend("force", filter or {}, { name = "agentls" })
  return vim.lsp.get_clients(f)
end

local function client_root(client)
  local wf = client.workspace_folders and client.workspace_folders[1]
  return (wf and wf.name) or client.root_dir or (client.config and client.config.root_dir)
end

--- The client for a call: the one attached to opts.bufnr (or the current
--- buffer), else the one of opts.root (or of the buffer's root), else a new
--- one for the buffer when it is a file, else any running one, else a new one
--- for the root (the current directory for a buffer without a file).
--- @param opts {bufnr?: integer, root?: string, start?: boolean}?
--- @return table? client, string? err
function M.get_client(opts)
  opts = opts or {}
  local bufnr = opts.bufnr or api.nvim_get_current_buf()
  if not opts.root then
    local attached = M.clients({ bufnr = bufnr })
    if attached[1] then
      return attached[1]
    end
  end
  local root = opts.root and normalize_dir(opts.root) or M.root_for(bufnr)
  local all = M.clients()
  for _, c in ipairs(all) do
    if client_root(c) == root then
      return c
    end
  end
  if opts.start ~= false and not opts.root and M.eligible(bufnr) then
    local id = M.attach(bufnr)
    if id then
      return vim.lsp.get_client_by_id(id)
    end
  end
  if not opts.root and all[1] then
    return all[1]
  end
  if opts.start == false then
    return nil, "agentls is not running"
  end
  local config, err = M.client_config(root)
  if not config then
    notify_missing(err)
    return nil, err
  end
  local id, serr = (has_011 and function(c)
    return vim.lsp.start(c, { attach = false })
  end or vim.lsp.start_client)(config)
  if not id then
    return nil, "agentls: could not start the server: " .. tostring(serr)
  end
  return vim.lsp.get_client_by_id(id)
end

--- Runs fn(client) once the client is initialized, or fn(nil, err).
--- @param opts table?
--- @param fn fun(client: table?, err: string?)
function M.with_client(opts, fn)
  local client, err = M.get_client(opts)
  if not client then
    fn(nil, err)
    return
  end
  local deadline = vim.uv.now() + ((opts and opts.start_timeout) or 15000)
  local function check()
    if client.initialized then
      fn(client)
    elseif cm(client, "is_stopped") then
      fn(nil, "agentls: the server stopped before it initialized (see :AgentlsLog and :LspLog)")
    elseif vim.uv.now() > deadline then
      fn(nil, "agentls: the server did not initialize in time")
    else
      vim.defer_fn(check, 10)
    end
  end
  check()
end

local call_seq = 0
local function new_call_id()
  call_seq = call_seq + 1
  return string.format("tc_nvim%x%04x", os.time(), call_seq)
end

--- Makes a Lua value safe to send as a JSON object (an empty table is {} not []).
local function as_object(v)
  if v == nil or (type(v) == "table" and next(v) == nil and getmetatable(v) == nil) then
    return vim.empty_dict()
  end
  return v
end

--- Calls a tool (tool/call). on_result(result, err) gets the ToolResult
--- (docs/protocol.md, "ToolResult") or a JSON-RPC error; without on_result the result
--- is shown in a window.
---
--- opts: reason, agent, call_id, bufnr, root, on_progress(value) for the
--- call's $/progress (begin/report/end: shell output, grep progress),
--- on_partial(value) for partial results (grep's batches of matches).
--- @return {call_id: string, cancel: fun()}
function M.call(name, args, on_result, opts)
  opts = opts or {}
  local events = require("agentls.events")
  local call_id = opts.call_id or new_call_id()
  local token = "agentls/" .. call_id
  local handle = { call_id = call_id, done = false }
  local params = {
    name = name,
    arguments = as_object(args),
    callId = call_id,
    reason = opts.reason,
    agent = opts.agent,
    workDoneToken = token,
    partialResultToken = opts.on_partial and (token .. "/partial") or nil,
  }
  events.route(token, { call_id = call_id, tool = name, on_progress = opts.on_progress })
  if opts.on_partial then
    events.route(token .. "/partial", { call_id = call_id, tool = name, partial = opts.on_partial })
  end
  local function finish(result, err)
    handle.done = true
    events.unroute(token)
    events.unroute(token .. "/partial")
    if on_result then
      on_result(result, err)
    else
      M.show_result(result, err)
    end
  end
  M.with_client(opts, function(client, err)
    if not client then
      finish(nil, { message = err })
      return
    end
    handle.client_id = client.id
    -- bufnr nil: every buffer's pending didChange is flushed first, so the tool reads what is on screen.
    local ok, req = cm(client, "request", "tool/call", params, function(rpc_err, result)
      finish(result, rpc_err)
    end, nil)
    if not ok then
      finish(nil, { message = "agentls: the request could not be sent (server stopped?)" })
      return
    end
    handle.request_id = req
  end)
  function handle.cancel()
    if handle.done or not handle.request_id then
      return
    end
    local c = vim.lsp.get_client_by_id(handle.client_id)
    if c then
      cm(c, "cancel_request", handle.request_id)
    end
    finish(nil, { code = -32800, message = "cancelled" })
  end
  return handle
end

--- A synchronous call for scripts: returns result, err (waits up to opts.timeout ms, default 60000).
function M.call_sync(name, args, opts)
  opts = opts or {}
  local result, err, done = nil, nil, false
  M.call(name, args, function(r, e)
    result, err, done = r, e, true
  end, opts)
  if not vim.wait(opts.timeout or 60000, function()
    return done
  end, 10) then
    return nil, { message = "timeout" }
  end
  return result, err
end

--- Sends a request to the client of opts; answer(err, result) gets the
--- reply, on_result(nil, {message}) the failure to find a client.
local function request(opts, method, params, on_result, answer)
  M.with_client(opts, function(client, err)
    if not client then
      return on_result(nil, { message = err })
    end
    cm(client, "request", method, params, answer, nil)
  end)
end

local tool_names = {}

--- Lists the tools (tool/list). on_result(tools, err); opts: format, agent, bufnr, root.
function M.list(on_result, opts)
  opts = opts or {}
  local params = { format = opts.format, agent = opts.agent }
  if next(params) == nil then
    params = vim.empty_dict()
  end
  request(opts, "tool/list", params, on_result, function(rpc_err, result)
    local tools = result and result.tools or nil
    if tools and (opts.format == nil or opts.format == "agentls") then
      tool_names = {}
      for _, t in ipairs(tools) do
        table.insert(tool_names, t.name)
      end
    end
    on_result(tools, rpc_err)
  end)
end

--- tool/metrics and tool/history.
function M.metrics(on_result, opts)
  request(opts, "tool/metrics", vim.empty_dict(), on_result, function(e, r)
    on_result(r and r.tools, e)
  end)
end

function M.history(on_result, opts)
  opts = opts or {}
  request(opts, "tool/history", { limit = opts.limit, tool = opts.tool }, on_result, function(e, r)
    on_result(r and r.entries, e)
  end)
end

--- Echoes one line, cut to the room of the command line, so that it never
--- asks for "Press ENTER"; it is kept in :messages.
function M.echo_line(text, level)
  text = tostring(text):gsub("[\r\n]+", " ⏎ ")
  local room = math.max(20, (vim.v.echospace or vim.o.columns) - 1)
  if vim.fn.strdisplaywidth(text) > room then
    text = vim.fn.strcharpart(text, 0, room - 1) .. "…"
    while vim.fn.strdisplaywidth(text) > room do
      text = vim.fn.strcharpart(text, 0, vim.fn.strchars(text) - 2) .. "…"
    end
  end
  local hl = (level == vim.log.levels.ERROR and "ErrorMsg") or (level == vim.log.levels.WARN and "WarningMsg") or "None"
  api.nvim_echo({ { text, hl } }, true, {})
end

--- The remembered "always" answers of the servers (approval/rules); with
--- remove (a rule id) that one is revoked first. on_result(rules, err, removed).
function M.rules(on_result, opts)
  opts = opts or {}
  local params = opts.remove and { remove = opts.remove } or vim.empty_dict()
  request(opts, "approval/rules", params, on_result, function(e, r)
    on_result(r and r.rules, e, r and r.removed)
  end)
end

-- Results, arguments and pickers for the person (commands.lua), under the
-- names they always had here.
for _, k in ipairs({ "format_result", "show_result", "pick_rules", "parse_args", "command_call", "pick_tool" }) do
  M[k] = commands[k]
end

--- Completion of :AgentlsCall's tool names.
function M.complete_tools(arglead)
  if #tool_names == 0 and #M.clients() > 0 then
    M.list(function() end)
    vim.wait(1000, function()
      return #tool_names > 0
    end, 10)
  end
  return vim.tbl_filter(function(n)
    return vim.startswith(n, arglead)
  end, tool_names)
end

--- The statusline part: "" when nothing is waiting, else e.g. "agentls: 2 awaiting approval".
function M.statusline()
  local n = require("agentls.approval").pending_count()
  if n == 0 then
    return ""
  end
  return string.format("agentls: %d awaiting approval", n)
end

--- The number of calls waiting for approval.
function M.pending_count()
  return require("agentls.approval").pending_count()
end

function M.open_log()
  return log.open()
end

--- Sends a configuration (the config file's shape) to the running servers as
--- workspace/didChangeConfiguration settings.agentls; later starts use it too.
function M.set_config(settings)
  M.config.settings = settings
  for _, c in ipairs(M.clients()) do
    c.settings = { agentls = settings }
    cm(c, "notify", "workspace/didChangeConfiguration", { settings = { agentls = settings } })
  end
end

--- Stops the agentls clients (all, or the one of a root).
function M.stop(root)
  for _, c in ipairs(M.clients()) do
    if root == nil or client_root(c) == normalize_dir(root) then
      cm(c, "stop")
    end
  end
end

function M.restart()
  local bufs, old = {}, M.clients()
  for _, c in ipairs(old) do
    for b in pairs(c.attached_buffers or {}) do
      bufs[b] = true
    end
    cm(c, "stop")
  end
  missing_notified = false
  -- vim.lsp.start reuses any client of the root that has not exited yet,
  -- one whose shutdown is still unanswered too: attach once every old
  -- client is gone (forced after 5 s).
  local waited = 0
  local function reattach()
    local running = vim.tbl_filter(function(c)
      return vim.lsp.get_client_by_id(c.id) ~= nil
    end, old)
    if #running > 0 and waited < 5000 then
      waited = waited + 50
      if waited >= 5000 then
        for _, c in ipairs(running) do
          cm(c, "stop", true)
        end
      end
      vim.defer_fn(reattach, 50)
      return
    end
    for b in pairs(bufs) do
      if api.nvim_buf_is_valid(b) then
        M.attach(b)
      end
    end
  end
  vim.defer_fn(reattach, 50)
end

--- setup(opts): merges opts into the configuration and, with autostart,
--- attaches every file buffer (those already open and those read later).
function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace, not merge.
  for _, k in ipairs({ "cmd", "root_markers", "filetypes", "exclude_filetypes" }) do
    if opts[k] ~= nil then
      M.config[k] = opts[k]
    end
  end
  missing_notified = false
  setup_done = true
  local group = api.nvim_create_augroup("agentls", { clear = true })
  if M.config.autostart then
    api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      callback = function(ev)
        -- After FileType and the other BufRead autocommands.
        vim.schedule(function()
          if api.nvim_buf_is_valid(ev.buf) then
            M.attach(ev.buf)
          end
        end)
      end,
    })
    if M.config.filetypes then
      api.nvim_create_autocmd("FileType", {
        group = group,
        callback = function(ev)
          M.attach(ev.buf)
        end,
      })
    end
    for _, b in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_loaded(b) then
        M.attach(b)
      end
    end
  end
  return M
end

function M.is_setup()
  return setup_done
end

return M
