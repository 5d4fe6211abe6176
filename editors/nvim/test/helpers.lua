-- Helpers of the agentls Neovim tests.
local H = {}
local api = vim.api

H.bin = os.getenv("AGENTLS_BIN") or "agentls"

local stubs = {}
local temps = {}

function H.fail(msg, level)
  error(msg, (level or 1) + 1)
end

function H.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    H.fail(string.format("%s: want %s, got %s", what or "value", vim.inspect(want), vim.inspect(got)), 2)
  end
end

function H.truthy(v, what)
  if not v then
    H.fail((what or "value") .. ": want truthy, got " .. vim.inspect(v), 2)
  end
  return v
end

function H.contains(hay, needle, what)
  if type(hay) == "table" then
    hay = table.concat(hay, "\n")
  end
  if type(hay) ~= "string" or not hay:find(needle, 1, true) then
    H.fail(string.format("%s: %q not found in:\n%s", what or "text", needle, tostring(hay)), 2)
  end
end

--- H.contains for each of needles.
function H.contains_each(hay, needles, what)
  for _, needle in ipairs(needles) do
    H.contains(hay, needle, what)
  end
end

function H.not_contains(hay, needle, what)
  if type(hay) == "table" then
    hay = table.concat(hay, "\n")
  end
  if type(hay) == "string" and hay:find(needle, 1, true) then
    H.fail(string.format("%s: %q found in:\n%s", what or "text", needle, hay), 2)
  end
end

--- Waits for cond(); fails with msg after ms (default 10 s).
function H.wait(cond, msg, ms)
  local ok = vim.wait(ms or 10000, cond, 10)
  if not ok then
    H.fail("timed out waiting for " .. (msg or "a condition"), 2)
  end
end

--- Replaces t[k] until the end of the test.
function H.stub(t, k, v)
  local was = t[k]
  H.after(function()
    t[k] = was
  end)
  t[k] = v
end

--- Runs fn at the end of the test (H.undo, last registered first).
function H.after(fn)
  table.insert(stubs, fn)
end

--- Undoes the test's stubs and runs its H.after functions.
function H.undo()
  for i = #stubs, 1, -1 do
    stubs[i]()
  end
  stubs = {}
end

--- Deletes the test's temporary workspaces.
function H.remove_temps()
  for _, d in ipairs(temps) do
    vim.fn.delete(d, "rf")
  end
  temps = {}
end

--- A temporary workspace with a .git folder and the given files.
function H.workspace(files)
  local dir = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(dir .. "/.git", "p")
  for name, text in pairs(files or {}) do
    local path = dir .. "/" .. name
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    H.write(path, text)
  end
  table.insert(temps, dir)
  return dir
end

function H.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function H.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

function H.buf_text(buf)
  return table.concat(api.nvim_buf_get_lines(buf or 0, 0, -1, false), "\n") .. "\n"
end

--- setup() with the binary under test.
function H.setup(opts)
  return require("agentls").setup(vim.tbl_deep_extend("force", { cmd = { H.bin }, approval = { guard_ms = 0, focus = true } }, opts or {}))
end

--- The agentls client attached to a buffer, once initialized.
function H.client(buf)
  buf = buf or api.nvim_get_current_buf()
  local c
  H.wait(function()
    c = vim.lsp.get_clients({ name = "agentls", bufnr = buf })[1]
    return c ~= nil and c.initialized
  end, "agentls to attach to buffer " .. buf)
  return c
end

--- Edits a file and waits for agentls on it.
function H.open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  return buf, H.client(buf)
end

--- A workspace with files (H.workspace), agentls set up with opts
--- (H.setup), and its file name open (H.open).
--- @return string ws, integer buf, table client
function H.project(files, name, opts)
  local ws = H.workspace(files)
  H.setup(opts)
  local buf, client = H.open(ws .. "/" .. name)
  return ws, buf, client
end

--- A tool call through the Lua API, waited for.
function H.call(name, args, opts)
  local result, err, done
  require("agentls").call(name, args, function(r, e)
    result, err, done = r, e, true
  end, opts)
  H.wait(function()
    return done
  end, "the result of " .. name, (opts and opts.timeout) or 15000)
  return result, err
end

--- Starts a call and returns a function that waits for its result.
function H.call_async(name, args, opts)
  local st = {}
  require("agentls").call(name, args, function(r, e)
    st.result, st.err, st.done = r, e, true
  end, opts)
  return st, function(ms)
    H.wait(function()
      return st.done
    end, "the result of " .. name, ms or 15000)
    return st.result, st.err
  end
end

--- Waits until n approvals are waiting and one is on screen.
function H.wait_approval(n)
  local approval = require("agentls.approval")
  H.wait(function()
    return approval.pending_count() >= (n or 1) and approval.current ~= nil and approval.current.ui ~= nil
  end, "an approval request on screen")
  return approval.current
end

--- Catches what agentls echoes (echo_line) from now on, in the table returned.
function H.echoes()
  local msgs = {}
  H.stub(require("agentls"), "echo_line", function(m)
    table.insert(msgs, m)
  end)
  return msgs
end

--- The default answering keys of a review.
H.APPROVE, H.REJECT, H.ALWAYS, H.EDIT = "<LocalLeader>y", "<LocalLeader>n", "<LocalLeader>A", "<LocalLeader>e"

--- The person answers vim.ui.input with word (nil: <Esc>); the table returned
--- gets the opts of the last question (prompt, default).
function H.confirm(word)
  local asked = {}
  H.stub(vim.ui, "input", function(opts, cb)
    for k, v in pairs(opts or {}) do
      asked[k] = v
    end
    cb(word)
  end)
  return asked
end

--- The person answers vim.ui.select with the first item pick(item, index)
--- accepts (none: cancels); the table returned gets the prompts asked, in
--- order, and the items of the last question as shown (opts.format_item).
function H.select(pick)
  local asked = { prompts = {} }
  H.stub(vim.ui, "select", function(items, opts, on_choice)
    opts = opts or {}
    table.insert(asked.prompts, opts.prompt)
    asked.shown = vim.tbl_map(opts.format_item or tostring, items)
    for i, it in ipairs(items) do
      if pick(it, i) then
        return on_choice(it)
      end
    end
    on_choice(nil)
  end)
  return asked
end

--- Types keys as a person would (mappings apply).
function H.feed(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "mx", false)
end

--- Lines of a window's buffer.
function H.win_lines(win)
  return api.nvim_buf_get_lines(api.nvim_win_get_buf(win), 0, -1, false)
end

--- Stops every language client; those still running after ms (default 2 s)
--- are stopped by force, and waited for as long again.
function H.stop_clients(ms)
  ms = ms or 2000
  local function none()
    return #vim.lsp.get_clients() == 0
  end
  for _, c in ipairs(vim.lsp.get_clients()) do
    c.stop()
  end
  if not vim.wait(ms, none, 10) then
    for _, c in ipairs(vim.lsp.get_clients()) do
      c.stop(true)
    end
    vim.wait(ms, none, 10)
  end
end

--- Calls the approval/request handler with synthetic params the way vim.lsp
--- 0.10 does (in coroutine.wrap); the table returned gets .answer and .done
--- when the handler returns.
function H.request(params)
  local st = {}
  coroutine.wrap(function()
    st.answer = require("agentls.approval").handler(nil, params, { method = "approval/request" })
    st.done = true
  end)()
  return st
end

--- Waits for the answer of H.request's st, and returns it.
function H.wait_answer(st)
  H.wait(function()
    return st.done
  end, "the answer")
  return st.answer
end

--- Back to a clean editor: stubs restored, approvals dropped, clients stopped, buffers wiped.
function H.reset()
  H.undo()
  local approval = require("agentls.approval")
  for _, e in ipairs(vim.list_slice(approval.queue)) do
    approval.answer(e, "reject", "test cleanup")
  end
  H.stop_clients(2000)
  pcall(vim.cmd, "silent! tabonly!")
  pcall(vim.cmd, "silent! only!")
  pcall(vim.cmd, "silent! %bwipeout!")
  pcall(api.nvim_clear_autocmds, { group = "agentls" })
  H.remove_temps()
end

return H
