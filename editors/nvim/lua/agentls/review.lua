--- The review of one approval request on screen (approval.lua keeps the
--- queue and the answers): the header (Tool, File, Reason, Risk, Warning,
--- keys), the tab with the current and the proposed text side by side in
--- diff mode, the float with the unified diff or the arguments, the review's
--- buffer-local keys, and opening and closing it.
local R = {}

local api = vim.api
local log = require("agentls.log")
local deadline = require("agentls.deadline")
local ns = api.nvim_create_namespace("agentls_approval")

--- The approval module (the queue, the answers), loaded on first use: it
--- loads this one.
local function A()
  return require("agentls.approval")
end

--- The approval settings (approval = {...} of setup).
function R.config()
  return require("agentls").config.approval or {}
end

local function keys()
  return vim.tbl_extend("force", require("agentls").defaults.approval.keys, R.config().keys or {})
end

--- A key as the person types it: <LocalLeader> and <Leader> replaced by
--- their values ("\\" unless set).
local function shown(lhs)
  if type(lhs) ~= "string" then
    return ""
  end
  local function val(v)
    return (type(v) == "string" and v ~= "") and v or "\\"
  end
  return (lhs:gsub("<[Ll]ocal[Ll]eader>", function()
    return val(vim.g.maplocalleader)
  end):gsub("<[Ll]eader>", function()
    return val(vim.g.mapleader)
  end))
end
R.shown_key = shown

-- Text helpers ---------------------------------------------------------------

local function to_lines(text)
  if text == nil or text == vim.NIL or text == "" then
    return {}
  end
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

--- Pretty JSON with sorted keys (for arguments).
local function pretty(v, indent)
  indent = indent or ""
  local t = type(v)
  if v == nil or v == vim.NIL then
    return "null"
  elseif t == "table" then
    local inner = indent .. "  "
    if vim.islist(v) and (next(v) ~= nil or getmetatable(v) == nil) then
      if #v == 0 then
        return "[]"
      end
      local parts = {}
      for _, x in ipairs(v) do
        table.insert(parts, inner .. pretty(x, inner))
      end
      return "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
    end
    local ks = vim.tbl_keys(v)
    if #ks == 0 then
      return "{}"
    end
    table.sort(ks, function(a, b)
      return tostring(a) < tostring(b)
    end)
    local parts = {}
    for _, k in ipairs(ks) do
      table.insert(parts, inner .. vim.json.encode(tostring(k)) .. ": " .. pretty(v[k], inner))
    end
    return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
  end
  local ok, s = pcall(vim.json.encode, v)
  return ok and (s:gsub("\\/", "/")) or tostring(v)
end
R.pretty = pretty

local function client_root(entry)
  local c = entry.client_id and vim.lsp.get_client_by_id(entry.client_id)
  local wf = c and c.workspace_folders and c.workspace_folders[1]
  return (wf and wf.name) or (c and c.root_dir) or vim.fn.getcwd()
end

local function abs_path(entry, f)
  if f.uri and f.uri ~= vim.NIL and f.uri ~= "" then
    return vim.uri_to_fname(f.uri)
  end
  local p = f.path or ""
  if p:sub(1, 1) == "/" then
    return p
  end
  return client_root(entry) .. "/" .. p
end

--- The text of a file now: its buffer when loaded, else the disk.
local function current_text(path)
  local b = vim.fn.bufnr(path)
  if b ~= -1 and api.nvim_buf_is_loaded(b) then
    return table.concat(api.nvim_buf_get_lines(b, 0, -1, false), "\n") .. "\n"
  end
  local ok, lines = pcall(vim.fn.readfile, path)
  if ok then
    return table.concat(lines, "\n") .. (#lines > 0 and "\n" or "")
  end
  return ""
end

local function files_of(entry)
  local p = entry.params
  return (p.preview and p.preview.files) or {}
end

--- The old and new text of file i of a request's preview.
function R.texts(entry, i)
  local f = files_of(entry)[i]
  if not f then
    return nil
  end
  local old = f.oldText
  if old == nil or old == vim.NIL then
    old = (f.operation == "create") and "" or current_text(abs_path(entry, f))
  end
  local new = f.newText
  if new == nil or new == vim.NIL then
    new = (f.operation == "delete") and "" or old
  end
  return old, new
end

--- Who asks: the agent's name, or "the agent".
local function who(entry)
  local a = entry.params.agent
  return (type(a) == "string" and a ~= "") and a or "the agent"
end

-- Header ---------------------------------------------------------------------

local function describe_file(f)
  local s = f.path or "?"
  if f.newPath and f.newPath ~= vim.NIL and f.newPath ~= "" then
    s = s .. " → " .. f.newPath
  end
  return s .. " (" .. (f.operation or "modify") .. ")"
end

--- The header lines and their highlights: { lines, hl = { {line0, group, col_start, col_end} } }.
function R.header(entry)
  local p = entry.params
  local args = type(p.arguments) == "table" and p.arguments or {}
  local k = vim.tbl_map(shown, keys())
  local lines, hl = {}, {}
  local function add(label, value, group)
    local prefix = string.format("%-9s", label)
    -- One line each: text from the server may hold newlines.
    value = tostring(value):gsub("\r?\n", " ⏎ ")
    table.insert(lines, prefix .. value)
    table.insert(hl, { #lines - 1, "Label", 0, #prefix })
    if group then
      table.insert(hl, { #lines - 1, group, #prefix, -1 })
    end
  end
  local pos, total = A().position(entry), #A().queue
  table.insert(lines, string.format("agentls: %s wants to run %s  (%d of %d waiting)  %s", who(entry), p.tool or "?", pos, total, p.callId or ""))
  table.insert(hl, { 0, "Title", 0, -1 })
  add("Tool:", p.tool or "?", "Identifier")
  if type(p.agent) == "string" and p.agent ~= "" then
    add("Agent:", p.agent, "Identifier")
  end
  local files = files_of(entry)
  if #files == 1 then
    add("File:", describe_file(files[1]), "Directory")
  elseif #files > 1 then
    local names = {}
    for i, f in ipairs(files) do
      local d = describe_file(f)
      if entry.ui and entry.ui.kind == "tab" and i == entry.file_index then
        d = "[" .. d .. "]"
      end
      table.insert(names, d)
    end
    add("Files:", string.format("%d: ", #files) .. table.concat(names, ", "), "Directory")
  elseif type(args.path) == "string" then
    add("File:", args.path, "Directory")
  end
  if type(args.command) == "string" then
    local cmd = args.command:gsub("\n", " ⏎ ")
    add("Command:", cmd, "Special")
  elseif type(args.url) == "string" then
    add("URL:", args.url, "Underlined")
  end
  if type(p.cwd) == "string" and p.cwd ~= "" then
    add("In:", p.cwd, "Directory")
  end
  add("Reason:", (p.reason and p.reason ~= "") and p.reason or "(none given)")
  local risk = p.risk or "?"
  add("Risk:", risk, (risk == "dangerous" or risk == "execute") and "ErrorMsg" or "WarningMsg")
  if p.warning and p.warning ~= vim.NIL and p.warning ~= "" then
    add("Warning:", p.warning, "ErrorMsg")
  end
  local left = deadline.time_left(entry)
  if left then
    add("Expires:", left, "WarningMsg")
  end
  if entry.changed_files and next(entry.changed_files) then
    local names = vim.tbl_keys(entry.changed_files)
    table.sort(names)
    add("Changed:", table.concat(names, ", ") .. " changed since this proposal: the edit will not apply; reject and ask again", "ErrorMsg")
  end
  local parts = {}
  if A().offers(entry, "approve") then
    table.insert(parts, k.approve .. " approve")
  end
  table.insert(parts, k.reject .. " reject")
  if A().offers(entry, "always") then
    table.insert(parts, k.always .. " " .. A().always_label(entry))
  end
  table.insert(parts, k.edit .. " edit arguments")
  table.insert(parts, k.help .. " help")
  table.insert(parts, k.hide .. " later")
  local keyline = table.concat(parts, " · ")
  if #files > 1 and entry.ui and entry.ui.kind == "tab" then
    keyline = keyline .. string.format(" · %s/%s next/previous file", k.next_file, k.prev_file)
  end
  table.insert(lines, keyline)
  table.insert(hl, { #lines - 1, "Comment", 0, -1 })
  if entry.help then
    local extra = {
      "",
      string.format("  %-4s approve: the tool runs once; an edit lands in the buffers and is saved", k.approve),
      "       when the buffer had no unsaved changes before it.",
      string.format("  %-4s reject: the tool does not run; you may give the agent a message.", k.reject),
      A().offers(entry, "always") and string.format("  %-4s %s: approve, and do not ask again for such calls", k.always, A().always_label(entry))
        or "       (always is not offered for this call: a dangerous call is approved one at a time)",
      "       in this session (or for good with approval.persistAlways); :AgentlsRules revokes it.",
      "       Always and approving a dangerous call ask you to type a word to confirm.",
      string.format("  %-4s edit the arguments (JSON); the server judges the edited call and asks again.", k.edit),
      string.format("  %-4s later: close this view; the call keeps waiting (:AgentlsReviews).", k.hide),
      string.format("  ]c [c  next/previous change (diff mode)        %s  hide this help", k.help),
      "  Arguments: " .. vim.json.encode(args):gsub("\\/", "/"):sub(1, 300),
    }
    for _, l in ipairs(extra) do
      table.insert(lines, l)
      table.insert(hl, { #lines - 1, "Comment", 0, -1 })
    end
  end
  return { lines = lines, hl = hl }
end

local function set_lines(buf, lines, hl)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(hl or {}) do
    local line = lines[h[1] + 1] or ""
    local e = h[4] == -1 and #line or h[4]
    pcall(api.nvim_buf_set_extmark, buf, ns, h[1], h[3], { end_col = e, hl_group = h[2] })
  end
end

-- Buffers and windows --------------------------------------------------------

local function scratch(entry, name)
  local b = api.nvim_create_buf(false, true)
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  vim.bo[b].undolevels = -1
  pcall(api.nvim_buf_set_name, b, string.format("agentls://%d/%s", entry.id, name))
  vim.b[b].agentls_approval = entry.id
  table.insert(entry.ui.bufs, b)
  R.map(entry, b)
  return b
end

--- Renames a scratch buffer without leaving its old name behind as a buffer.
local function rename(buf, name)
  local old = api.nvim_buf_get_name(buf)
  if old == name or not pcall(api.nvim_buf_set_name, buf, name) then
    return
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if b ~= buf and not api.nvim_buf_is_loaded(b) and api.nvim_buf_get_name(b) == old then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

local function syntax_for(path)
  local ok, ft = pcall(vim.filetype.match, { filename = path })
  return ok and ft or nil
end

--- Buffer-local keys of the approval UI.
function R.map(entry, buf)
  local k = keys()
  local function map(lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "agentls: " .. desc })
    end
  end
  -- A decision typed right as the review opens was meant for the buffer
  -- underneath (a "yy" or an "a"), not for the agent: it is ignored.
  local function guarded(fn)
    return function()
      local guard = R.config().guard_ms or 0
      if entry.opened_at and guard > 0 and (vim.uv.now() - entry.opened_at) < guard then
        require("agentls").echo_line("agentls: the review just opened; press the key again to decide", vim.log.levels.WARN)
        return
      end
      fn()
    end
  end
  -- In this order: a key set twice does what its later use says.
  for _, d in ipairs({
    { "approve", "approve_key", "approve", true },
    { "reject", "reject", "reject", true },
    { "always", "always_key", "always allow (what the review says)", true },
    { "edit", "edit_arguments", "edit the arguments, then approve", true },
    { "help", "toggle_help", "help" },
    { "hide", "hide", "decide later" },
  }) do
    local function act()
      A()[d[2]](entry)
    end
    map(k[d[1]], d[4] and guarded(act) or act, d[3])
  end
  map(k.next_file, function()
    R.show_file(entry, (entry.file_index or 1) + 1)
  end, "next file")
  map(k.prev_file, function()
    R.show_file(entry, (entry.file_index or 1) - 1)
  end, "previous file")
end

local function render_header(entry)
  local ui = entry.ui
  if not ui then
    return
  end
  local h = R.header(entry)
  if ui.kind == "tab" then
    set_lines(ui.header_buf, h.lines, h.hl)
    if ui.header_win and api.nvim_win_is_valid(ui.header_win) then
      api.nvim_win_set_height(ui.header_win, R.rows(h.lines, api.nvim_win_get_width(ui.header_win)))
    end
  else
    R.render_float(entry)
  end
end

--- Shows file i of a tab UI in the diff windows.
function R.show_file(entry, i)
  local ui = entry.ui
  local files = files_of(entry)
  if not ui or ui.kind ~= "tab" or #files == 0 then
    return
  end
  i = ((i - 1) % #files) + 1
  entry.file_index = i
  local f = files[i]
  local old, new = R.texts(entry, i)
  local syn = syntax_for(f.path or "")
  -- The tab's label is the buffer's name: the file's name, not a path.
  local tail = vim.fs.basename(f.path or "?")
  rename(ui.old_buf, string.format("%s · current #%d", tail, entry.id))
  rename(ui.new_buf, string.format("%s · proposed #%d", tail, entry.id))
  set_lines(ui.old_buf, to_lines(old))
  set_lines(ui.new_buf, to_lines(new))
  for _, b in ipairs({ ui.old_buf, ui.new_buf }) do
    if syn then
      vim.bo[b].syntax = syn
    end
  end
  if api.nvim_win_is_valid(ui.old_win) then
    vim.wo[ui.old_win].winbar = "%#DiffDelete# current %* " .. (f.path or ""):gsub("%%", "%%%%")
  end
  if api.nvim_win_is_valid(ui.new_win) then
    vim.wo[ui.new_win].winbar = "%#DiffAdd# proposed %* " .. describe_file(f):gsub("%%", "%%%%")
  end
  pcall(api.nvim_win_call, ui.new_win, function()
    vim.cmd("diffupdate")
  end)
  render_header(entry)
  -- Cursor on the first change.
  pcall(api.nvim_win_call, ui.new_win, function()
    api.nvim_win_set_cursor(0, { 1, 0 })
    if vim.fn.diff_hlID(1, 1) == 0 then
      vim.cmd("silent! normal! ]c")
    end
  end)
end

local function open_tab(entry)
  local ui = { kind = "tab", bufs = {}, prev_tab = api.nvim_get_current_tabpage() }
  entry.ui = ui
  vim.cmd("tabnew")
  ui.tab = api.nvim_get_current_tabpage()
  local empty = api.nvim_get_current_buf()
  vim.bo[empty].bufhidden = "wipe"
  ui.old_buf = scratch(entry, "current")
  ui.new_buf = scratch(entry, "proposed")
  ui.header_buf = scratch(entry, "approval")
  ui.old_win = api.nvim_get_current_win()
  api.nvim_win_set_buf(ui.old_win, ui.old_buf)
  ui.new_win = api.nvim_open_win(ui.new_buf, true, { split = "right", win = ui.old_win })
  for _, w in ipairs({ ui.old_win, ui.new_win }) do
    api.nvim_win_call(w, function()
      vim.cmd("diffthis")
    end)
    vim.wo[w].foldlevel = 0
    vim.wo[w].wrap = false
  end
  local h = R.header(entry)
  ui.header_win = api.nvim_open_win(ui.header_buf, false, { split = "above", win = -1, height = R.rows(h.lines, vim.o.columns) })
  vim.wo[ui.header_win].winfixheight = true
  vim.wo[ui.header_win].number = false
  vim.wo[ui.header_win].relativenumber = false
  vim.wo[ui.header_win].signcolumn = "no"
  vim.wo[ui.header_win].wrap = true
  vim.wo[ui.header_win].winbar = ""
  api.nvim_set_current_win(ui.new_win)
  R.show_file(entry, entry.file_index or 1)
  if not entry.focus and ui.prev_tab and api.nvim_tabpage_is_valid(ui.prev_tab) then
    -- Back where the person was: the review waits in its tab.
    api.nvim_set_current_tabpage(ui.prev_tab)
  end
end

--- The screen rows lines take in a window of that width (they wrap).
function R.rows(lines, width)
  local rows = 0
  width = math.max(1, width)
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  return rows
end

--- Lines of the float: the header, then the unified diff or the arguments.
local function float_body(entry)
  local p = entry.params
  local h = R.header(entry)
  local lines, hl = h.lines, h.hl
  table.insert(lines, string.rep("─", 60))
  table.insert(hl, { #lines - 1, "FloatBorder", 0, -1 })
  local diff = p.preview and p.preview.unifiedDiff
  if diff and diff ~= vim.NIL and diff ~= "" then
    for _, l in ipairs(to_lines(diff)) do
      table.insert(lines, l)
      local g
      if l:match("^%+%+%+") or l:match("^%-%-%-") then
        g = "diffFile"
      elseif l:match("^@@") then
        g = "diffLine"
      elseif l:match("^%+") then
        g = "diffAdded"
      elseif l:match("^%-") then
        g = "diffRemoved"
      end
      if g then
        table.insert(hl, { #lines - 1, g, 0, -1 })
      end
    end
  else
    local args = type(p.arguments) == "table" and p.arguments or {}
    if type(args.command) == "string" then
      for _, l in ipairs(to_lines(args.command)) do
        table.insert(lines, "$ " .. l)
        table.insert(hl, { #lines - 1, "Special", 0, -1 })
      end
      local rest = vim.deepcopy(args)
      rest.command = nil
      if next(rest) then
        vim.list_extend(lines, vim.split(pretty(rest), "\n"))
      end
    elseif type(args.code) == "string" then
      table.insert(lines, "-- " .. tostring(args.language or "code") .. " --")
      vim.list_extend(lines, to_lines(args.code))
    else
      vim.list_extend(lines, vim.split(pretty(args), "\n"))
    end
  end
  return lines, hl
end

function R.render_float(entry)
  local ui = entry.ui
  local lines, hl = float_body(entry)
  set_lines(ui.buf, lines, hl)
  local width = 40
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 2)
  end
  width = math.min(width, math.max(20, vim.o.columns - 6))
  -- Lines wrap: a long command is shown whole.
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local height = math.min(rows, math.max(3, vim.o.lines - 6))
  local conf = {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    border = "rounded",
    title = " agentls review ",
    title_pos = "center",
    style = "minimal",
  }
  if ui.win and api.nvim_win_is_valid(ui.win) then
    api.nvim_win_set_config(ui.win, conf)
  else
    ui.win = api.nvim_open_win(ui.buf, entry.focus == true, conf)
    vim.wo[ui.win].wrap = true
    vim.wo[ui.win].linebreak = false
    vim.wo[ui.win].cursorline = true
  end
end

local function open_float(entry)
  entry.ui = { kind = "float", bufs = {} }
  entry.ui.buf = scratch(entry, "float")
  -- The tab's label while the float has the cursor: the tool, not a path.
  rename(entry.ui.buf, string.format("%s · review #%d", entry.params.tool or "call", entry.id))
  R.render_float(entry)
end

local function has_texts(entry)
  for _, f in ipairs(files_of(entry)) do
    if (f.oldText ~= nil and f.oldText ~= vim.NIL) or (f.newText ~= nil and f.newText ~= vim.NIL) then
      return true
    end
  end
  return false
end

--- Shows an entry (the oldest one waiting, by default). opts.focus moves
--- the cursor there (a deliberate opening: a command); otherwise
--- approval.focus decides.
function R.show(entry, opts)
  entry = entry or A().current or A().queue[1]
  if not entry or entry.done then
    return false
  end
  local focus = (opts and opts.focus)
  if focus == nil then
    focus = R.config().focus == true
  end
  entry.focus = focus
  if A().current and A().current ~= entry and A().current.ui then
    -- One review at a time: the other one waits, still pending.
    A().hide(A().current, { quiet = true })
  end
  entry.hidden = false
  entry.deferred = nil
  A().current = entry
  if entry.ui then
    if entry.ui.kind == "tab" and api.nvim_tabpage_is_valid(entry.ui.tab) then
      if focus then
        api.nvim_set_current_tabpage(entry.ui.tab)
      end
      return true
    elseif entry.ui.kind == "float" and api.nvim_win_is_valid(entry.ui.win) then
      if focus then
        api.nvim_set_current_win(entry.ui.win)
      end
      return true
    end
    entry.ui = nil
  end
  local ok, err = pcall(function()
    if R.config().ui ~= "float" and has_texts(entry) then
      open_tab(entry)
    else
      open_float(entry)
    end
  end)
  if not ok then
    log.append("approval UI failed: " .. tostring(err))
    vim.notify("agentls: could not open the approval view (:AgentlsPending retries): " .. tostring(err), vim.log.levels.ERROR)
    if entry.ui then
      local half = entry.ui
      entry.ui = nil
      for _, b in ipairs(half.bufs or {}) do
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
    entry.hidden = true
    A().current = nil
    return false
  end
  -- The guard counts from now.
  local function arm()
    vim.uv.update_time()
    entry.opened_at = vim.uv.now()
  end
  arm()
  entry.inside = focus
  local ui = entry.ui
  if not focus then
    local where = ui.kind == "tab" and string.format("in tab %d", api.nvim_tabpage_get_number(ui.tab)) or "in a float"
    require("agentls").echo_line(string.format("agentls: %s wants to run %s — review waiting %s (:AgentlsReviews)",
      who(entry), entry.params.tool or "a call", where), vim.log.levels.WARN)
  end
  -- The time left counts down while the review is on screen.
  if deadline.deadline_of(entry) then
    ui.timer = vim.uv.new_timer()
    ui.timer:start(1000, 1000, vim.schedule_wrap(function()
      if entry.ui == ui and not entry.done then
        pcall(render_header, entry)
      end
    end))
  end
  -- Every entering of the review (first or again) has the guard: keys typed
  -- as it appears were meant for the buffer the person came from.
  -- (Each autocmd removes itself once the view or the call is gone.)
  local function while_shown(event, b, fn)
    api.nvim_create_autocmd(event, {
      buffer = b,
      callback = function()
        if entry.ui ~= ui or entry.done then
          return true
        end
        fn()
      end,
    })
  end
  for _, b in ipairs(ui.bufs) do
    while_shown("BufEnter", b, function()
      if not entry.inside then
        arm()
      end
      entry.inside = true
    end)
    while_shown("BufLeave", b, function()
      vim.schedule(function()
        local cur = api.nvim_get_current_buf()
        entry.inside = vim.b[cur].agentls_approval == entry.id
      end)
    end)
  end
  -- The user closing the view by other means keeps the call pending.
  for _, b in ipairs(ui.bufs) do
    api.nvim_create_autocmd("BufWipeout", {
      buffer = b,
      once = true,
      callback = function()
        if entry.ui == ui and not entry.done then
          vim.schedule(function()
            if entry.ui == ui then
              A().hide(entry)
            end
          end)
        end
      end,
    })
  end
  return true
end

local function close_ui(entry)
  local ui = entry.ui
  if not ui then
    return
  end
  entry.ui = nil
  if ui.timer then
    ui.timer:stop()
    ui.timer:close()
    ui.timer = nil
  end
  if ui.kind == "tab" and ui.tab and api.nvim_tabpage_is_valid(ui.tab) then
    local was_here = api.nvim_get_current_tabpage() == ui.tab
    if #api.nvim_list_tabpages() == 1 then
      vim.cmd("tabnew")
    end
    pcall(vim.cmd, "tabclose! " .. api.nvim_tabpage_get_number(ui.tab))
    if was_here and ui.prev_tab and api.nvim_tabpage_is_valid(ui.prev_tab) then
      api.nvim_set_current_tabpage(ui.prev_tab)
    end
  elseif ui.kind == "float" and ui.win and api.nvim_win_is_valid(ui.win) then
    pcall(api.nvim_win_close, ui.win, true)
  end
  for _, b in ipairs(ui.bufs) do
    if api.nvim_buf_is_valid(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

R.files_of = files_of
R.abs_path = abs_path
R.who = who
R.render_header = render_header
R.close_ui = close_ui

return R
