--- The agentls://log buffer: tool events, streamed tool output, edits applied.
local M = {}

local api = vim.api
local NAME = "agentls://log"

--- @type integer?
M.buf = nil

local function config()
  local ok, agentls = pcall(require, "agentls")
  return ok and agentls.config and agentls.config.log or {}
end

local function ensure_buf()
  if M.buf and api.nvim_buf_is_valid(M.buf) then
    return M.buf
  end
  local existing = vim.fn.bufnr(NAME)
  if existing ~= -1 then
    M.buf = existing
    return M.buf
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, NAME)
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].undolevels = -1
  vim.b[buf].agentls_empty = true
  M.buf = buf
  return buf
end

--- Appends a message (string with newlines, or a list of lines) with a time stamp.
--- @param msg string|string[]
--- @param opts {stamp?: boolean}?
function M.append(msg, opts)
  local lines = type(msg) == "table" and msg or vim.split(tostring(msg), "\n", { plain = true })
  if #lines == 0 then
    return
  end
  if not (opts and opts.stamp == false) then
    lines[1] = os.date("%H:%M:%S ") .. lines[1]
  end
  local function write()
    local buf = ensure_buf()
    -- Windows showing the end of the log follow it.
    local follow = {}
    local last = api.nvim_buf_line_count(buf)
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if api.nvim_win_get_cursor(win)[1] >= last then
        table.insert(follow, win)
      end
    end
    vim.bo[buf].modifiable = true
    if vim.b[buf].agentls_empty then
      api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      vim.b[buf].agentls_empty = false
    else
      api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
    local max = config().max_lines or 10000
    local count = api.nvim_buf_line_count(buf)
    if count > max then
      api.nvim_buf_set_lines(buf, 0, count - max, false, {})
    end
    vim.bo[buf].modifiable = false
    vim.bo[buf].modified = false
    local n = api.nvim_buf_line_count(buf)
    for _, win in ipairs(follow) do
      pcall(api.nvim_win_set_cursor, win, { n, 0 })
    end
  end
  if vim.in_fast_event() then
    vim.schedule(write)
  else
    write()
  end
end

--- An optional part of a line: string.format(fmt, value), or "" when value
--- is nil or "".
--- @param fmt string
--- @param value any
--- @return string
function M.part(fmt, value)
  if value == nil or value == "" then
    return ""
  end
  return string.format(fmt, value)
end

--- The log's lines (for tests and scripts).
function M.lines()
  if not (M.buf and api.nvim_buf_is_valid(M.buf)) then
    return {}
  end
  return api.nvim_buf_get_lines(M.buf, 0, -1, false)
end

--- Opens the log in a split (or focuses it).
function M.open()
  local buf = ensure_buf()
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    api.nvim_set_current_win(win)
  else
    vim.cmd("botright split")
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    api.nvim_win_set_height(win, 12)
  end
  vim.wo[win].wrap = false
  pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(buf), 0 })
  return buf
end

return M
