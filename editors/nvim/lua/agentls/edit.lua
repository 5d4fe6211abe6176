--- workspace/applyEdit for agentls: applies the edit a person approved and
--- saves the buffers it touched that were unmodified before it
--- (experimental.agentls.saveAfterApply, docs/protocol.md, "Approval").
local M = {}

local api = vim.api
local util = vim.lsp.util
local log = require("agentls.log")
local docversions = require("agentls.versions")

--- A path for messages: relative to the workspace root when under it.
local function rel(path, root)
  if root and vim.startswith(path, root .. "/") then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

local function fname(uri)
  return vim.fs.normalize(vim.uri_to_fname(uri))
end

--- The loaded buffer of a file, if any.
local function buf_of(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(b) and vim.fs.normalize(api.nvim_buf_get_name(b)) == path then
      return b
    end
  end
end

--- Files an edit writes text to, in order: {path, before_path}, and the
--- versions its text edits expect.
local function touched(edit)
  local files, seen, versions = {}, {}, {}
  local function add(path, before)
    if not seen[path] then
      seen[path] = true
      table.insert(files, { path = path, before = before or path })
    end
  end
  if edit.documentChanges then
    for _, ch in ipairs(edit.documentChanges) do
      if ch.kind == "create" then
        add(fname(ch.uri))
      elseif ch.kind == "rename" then
        add(fname(ch.newUri), fname(ch.oldUri))
      elseif ch.kind == nil and ch.textDocument then
        local p = fname(ch.textDocument.uri)
        add(p)
        if ch.textDocument.version ~= nil and ch.textDocument.version ~= vim.NIL and versions[p] == nil then
          versions[p] = ch.textDocument.version
        end
      end
    end
  elseif edit.changes then
    for uri in pairs(edit.changes) do
      add(fname(uri))
    end
  end
  return files, versions
end

--- Writes a buffer (with the user's autocommands, so formatters and didSave run).
local function save(buf)
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd("silent lockmarks keepalt keepjumps update")
  end)
  if not ok then
    return false, tostring(err)
  end
  if vim.bo[buf].modified then
    return false, "still modified after :update"
  end
  return true
end

--- Buffers of path (a file) or of the files below it (a folder), loaded
--- and holding files: {buf, from, to} for a rename of path to new.
local function moved_bufs(path, new)
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    local name = vim.fs.normalize(api.nvim_buf_get_name(b))
    local rest = name == path and "" or (vim.startswith(name, path .. "/") and name:sub(#path + 1))
    if rest and api.nvim_buf_is_loaded(b) and not vim.list_contains({ "nofile", "nowrite" }, vim.bo[b].buftype) then
      table.insert(out, { buf = b, from = name, to = new .. rest })
    end
  end
  return out
end

--- A RenameFile that keeps the unsaved text of the buffers it moves
--- unsaved: Neovim's own (vim.lsp.util.rename) renames a buffer with
--- :saveas!, which writes the buffer, unsaved text and all, to the new
--- path. Here the file is moved on disk, then each buffer takes the new
--- name, reloads the file there (so that :write writes it without E13) and
--- gets its text back: it stays modified, its undo history kept
--- ('undoreload'), and the server hears didClose of the old name and
--- didOpen of the new one (the reload), then the unsaved text (didChange).
--- Without a modified buffer, Neovim's own rename runs.
local function rename(old, new, opts, builtin)
  opts = opts or {}
  local from = vim.fs.normalize(old)
  local to = vim.fs.normalize(new)
  local bufs = moved_bufs(from, to)
  local modified = false
  for _, m in ipairs(bufs) do
    modified = modified or vim.bo[m.buf].modified
  end
  if not modified then
    return builtin(old, new, opts)
  end
  if vim.uv.fs_stat(to) and (not opts.overwrite or opts.ignoreIfExists) then
    error(to .. " already exists")
  end
  vim.fn.mkdir(vim.fs.dirname(to), "p")
  local ok, err = os.rename(from, to)
  if not ok then
    error(err)
  end
  for _, m in ipairs(bufs) do
    local lines = api.nvim_buf_get_lines(m.buf, 0, -1, false)
    local was = vim.bo[m.buf].modified
    api.nvim_buf_call(m.buf, function()
      local view = vim.fn.winsaveview()
      api.nvim_buf_set_name(m.buf, m.to)
      vim.cmd("silent keepalt keepjumps edit!")
      if was then
        api.nvim_buf_set_lines(m.buf, 0, -1, false, lines)
      end
      vim.fn.winrestview(view)
    end)
    -- :file leaves a buffer with the old name behind (the alternate file).
    local stale = vim.fn.bufnr(m.from)
    if stale ~= -1 and stale ~= m.buf and not api.nvim_buf_is_loaded(stale) then
      pcall(api.nvim_buf_delete, stale, { force = true })
    end
  end
end

--- A CreateFile as Neovim's own applies it (LSP: overwrite wins over
--- ignoreIfExists): the file created empty, or left, and listed as a
--- buffer; but a file that cannot be created fails the edit, where
--- Neovim's own goes on.
local function create(change)
  local opts = change.options or {}
  local path = vim.uri_to_fname(change.uri)
  if not opts.ignoreIfExists or opts.overwrite then
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    local f, err = io.open(path, "w")
    if not f then
      error(err, 0)
    end
    f:close()
  end
  vim.fn.bufadd(path)
end

--- A DeleteFile as Neovim's own applies it: the file (or the folder,
--- recursively when it says so) removed and its buffer wiped.
local function delete(change)
  local opts = change.options or {}
  local path = vim.uri_to_fname(change.uri)
  local st = vim.uv.fs_stat(path)
  if not st then
    if opts.ignoreIfNotExists then
      return
    end
    error("cannot delete " .. path .. ": it does not exist", 0)
  end
  local flags = ""
  if st.type == "directory" then
    flags = opts.recursive and "rf" or "d"
  end
  local b = vim.fn.bufadd(path)
  if vim.fn.delete(path, flags) ~= 0 then
    error("could not delete " .. path, 0)
  end
  api.nvim_buf_delete(b, { force = true })
end

--- Applies a WorkspaceEdit change by change with Neovim's public
--- functions (vim.lsp.util.apply_text_document_edit, apply_text_edits,
--- rename), as vim.lsp.util.apply_workspace_edit does, but for a
--- RenameFile, which goes to rename above (the unsaved text of a moved
--- buffer stays unsaved).
local function apply(edit, enc)
  if edit.documentChanges then
    for i, change in ipairs(edit.documentChanges) do
      if change.kind == "rename" then
        rename(vim.uri_to_fname(change.oldUri), vim.uri_to_fname(change.newUri), change.options, util.rename)
      elseif change.kind == "create" then
        create(change)
      elseif change.kind == "delete" then
        delete(change)
      elseif change.kind then
        error("unsupported change: " .. vim.inspect(change), 0)
      else
        util.apply_text_document_edit(change, i, enc)
      end
    end
    return
  end
  for uri, edits in pairs(edit.changes or {}) do
    util.apply_text_edits(edits, vim.uri_to_bufnr(uri), enc)
  end
end

--- The handler of workspace/applyEdit.
function M.handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not (params and params.edit) then
    return { applied = false, failureReason = "workspace/applyEdit without an edit" }
  end
  local edit = params.edit
  local files, versions = touched(edit)

  -- What was unmodified (or not loaded) before the edit, and stale versions.
  local before = {}
  for _, f in ipairs(files) do
    local b = buf_of(f.before)
    local loaded = b ~= nil and api.nvim_buf_is_loaded(b)
    local empty
    if loaded then
      empty = api.nvim_buf_line_count(b) == 1 and api.nvim_buf_get_lines(b, 0, 1, false)[1] == ""
    else
      local st = vim.uv.fs_stat(f.before)
      empty = st == nil or st.size == 0
    end
    before[f.path] = { loaded = loaded, modified = b ~= nil and vim.bo[b].modified, empty = empty }
    local want = versions[f.path]
    local have = b and docversions.version(b)
    if want and want >= 0 and have and have > want then
      local reason = string.format(
        "%s changed in the editor since the edit was made (version %d, the edit is for %d)",
        f.path,
        have,
        want
      )
      log.append("edit not applied: " .. reason)
      return { applied = false, failureReason = reason }
    end
  end

  local enc = client and client.offset_encoding or "utf-16"
  -- Messages of the edit (Neovim renames with :saveas!, which prints the
  -- file's name; a rename onto an existing file is skipped with a message)
  -- go to the log instead of the screen.
  local ok, err
  M.pending_apply = function()
    ok, err = pcall(apply, edit, enc)
  end
  local eok, out = pcall(api.nvim_exec2, "lua require('agentls.edit').pending_apply()", { output = true })
  M.pending_apply = nil
  if not eok then
    ok, err = false, out
  elseif out and out.output and vim.trim(out.output) ~= "" then
    log.append("while applying: " .. vim.trim(out.output))
  end
  if not ok then
    log.append("edit failed: " .. tostring(err))
    return { applied = false, failureReason = tostring(err) }
  end

  -- An empty document is "" to the server but one empty line to Neovim: text
  -- inserted into it would keep that line after its own final newline.
  for _, f in ipairs(files) do
    local b = buf_of(f.path)
    if before[f.path] and before[f.path].empty and b and api.nvim_buf_is_loaded(b) then
      local n = api.nvim_buf_line_count(b)
      if n > 1 and api.nvim_buf_get_lines(b, n - 1, n, false)[1] == "" then
        api.nvim_buf_set_lines(b, n - 1, n, false, {})
      end
    end
  end

  -- Neovim sends the edit's didChange (debounced, flags.debounce_text_changes)
  -- before any other notification of the client, so before the didSave of
  -- a buffer saved below; the server waits for it after the reply
  -- (docs/protocol.md, "After an applied edit").

  local saved, unsaved = {}, {}
  local agentls = require("agentls")
  local wf = client and client.workspace_folders and client.workspace_folders[1]
  local root = wf and wf.name
  for _, f in ipairs(files) do
    local b = buf_of(f.path)
    if b and api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      local was = before[f.path]
      if agentls.config.save_after_apply and not was.modified then
        local sok, serr = save(b)
        if sok then
          table.insert(saved, rel(f.path, root))
        else
          table.insert(unsaved, rel(f.path, root) .. " (" .. serr .. ")")
        end
      else
        table.insert(unsaved, rel(f.path, root))
      end
    end
  end
  local msg = "applied edit" .. (params.label and (" “" .. params.label .. "”") or "")
  if #saved > 0 then
    msg = msg .. "; saved " .. table.concat(saved, ", ")
  end
  if #unsaved > 0 then
    msg = msg .. "; unsaved " .. table.concat(unsaved, ", ")
  end
  log.append(msg)
  pcall(api.nvim_exec_autocmds, "User", {
    pattern = "AgentlsEditApplied",
    modeline = false,
    data = { label = params.label, saved = saved, unsaved = unsaved },
  })
  return { applied = true }
end

return M
