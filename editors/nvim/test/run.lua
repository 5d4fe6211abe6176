-- A plain test runner for headless Neovim:
--   AGENTLS_BIN=/path/to/agentls nvim --headless -u NONE -i NONE -n -c "luafile editors/nvim/test/run.lua"
-- Loads every test/*_spec.lua, runs its it() blocks in order (each may
-- vim.wait for the server), prints one line per test and the summary
-- "N passed, M failed" (and pending), and exits with cquit on failure.
-- AGENTLS_TEST_FILTER=text runs only the tests whose full name contains text.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin_root = vim.fn.fnamemodify(here, ":h")

-- AGENTLS_TEST_PLAIN=1 runs the plain_*_spec.lua files alone, without the
-- agentls plugin (run.sh starts that Neovim with --clean); otherwise they
-- are left out.
local plain = os.getenv("AGENTLS_TEST_PLAIN") == "1"
if not plain then
  vim.opt.runtimepath:prepend(plugin_root)
  package.path = table.concat({ here .. "/?.lua", plugin_root .. "/lua/?.lua", plugin_root .. "/lua/?/init.lua", package.path }, ";")
end
vim.o.swapfile = false
vim.o.hidden = true
vim.o.more = false
vim.o.shortmess = vim.o.shortmess .. "AIF"
vim.o.columns = 160
vim.o.lines = 40
vim.cmd("filetype on")
if not plain then
  vim.cmd("runtime plugin/agentls.lua")
end

local out = io.stdout
local function say(s)
  out:write(s, "\n")
  out:flush()
end

-- Messages go to the output on lines of their own (tests stub vim.notify to check them).
vim.notify = function(msg, level)
  say(string.format("      [notify %s] %s", tostring(level or "info"), tostring(msg):gsub("\n", "\n      ")))
end

local tests = {}
local stack = {}
local hooks = { before = {}, after = {} }

local function full(name)
  local parts = {}
  for _, s in ipairs(stack) do
    table.insert(parts, s)
  end
  table.insert(parts, name)
  return table.concat(parts, " › ")
end

function _G.describe(name, fn)
  table.insert(stack, name)
  fn()
  table.remove(stack)
end

function _G.it(name, fn)
  table.insert(tests, { name = full(name), fn = fn, file = _G.__spec_file })
end

function _G.pending(name, why)
  table.insert(tests, { name = full(name), pending = why or "pending", file = _G.__spec_file })
end

function _G.before_each(fn)
  table.insert(hooks.before, { file = _G.__spec_file, fn = fn })
end

function _G.after_each(fn)
  table.insert(hooks.after, { file = _G.__spec_file, fn = fn })
end

local specs = vim.fn.globpath(here, "*_spec.lua", false, true)
vim.list_extend(specs, vim.fn.globpath(here, "*_test.lua", false, true))
specs = vim.tbl_filter(function(f)
  return (vim.fn.fnamemodify(f, ":t"):match("^plain_") ~= nil) == plain
end, specs)
table.sort(specs)
local load_failed = 0
for _, f in ipairs(specs) do
  _G.__spec_file = f
  local ok, err = xpcall(dofile, debug.traceback, f)
  if not ok then
    load_failed = load_failed + 1
    say("FAIL  loading " .. vim.fn.fnamemodify(f, ":t") .. ": " .. tostring(err))
  end
end

local filter = os.getenv("AGENTLS_TEST_FILTER")
local passed, failed, pend = 0, 0, 0
local failures = {}
local t0 = vim.uv.hrtime()

for _, t in ipairs(tests) do
  if filter and filter ~= "" and not t.name:find(filter, 1, true) then
    goto continue
  end
  if t.pending then
    pend = pend + 1
    say("PEND  " .. t.name .. " — " .. t.pending)
    goto continue
  end
  do
    local start = vim.uv.hrtime()
    local ok, err = true, nil
    for _, h in ipairs(hooks.before) do
      if h.file == t.file and ok then
        ok, err = xpcall(h.fn, debug.traceback)
      end
    end
    if ok then
      ok, err = xpcall(t.fn, debug.traceback)
    end
    for _, h in ipairs(hooks.after) do
      if h.file == t.file then
        local hok, herr = xpcall(h.fn, debug.traceback)
        if ok and not hok then
          ok, err = false, "after_each: " .. tostring(herr)
        end
      end
    end
    local ms = (vim.uv.hrtime() - start) / 1e6
    if ok then
      passed = passed + 1
      say(string.format("ok    %s (%d ms)", t.name, ms))
    else
      failed = failed + 1
      say(string.format("FAIL  %s (%d ms)\n%s", t.name, ms, tostring(err):gsub("\n", "\n      ")))
      table.insert(failures, t.name)
    end
  end
  ::continue::
end

failed = failed + load_failed
say("")
if #failures > 0 then
  say("failed:")
  for _, n in ipairs(failures) do
    say("  " .. n)
  end
end
local summary = string.format("%d passed, %d failed", passed, failed)
if pend > 0 then
  summary = summary .. string.format(", %d pending", pend)
end
say(summary .. string.format(" (%.1f s)", (vim.uv.hrtime() - t0) / 1e9))

-- Stop the servers before leaving.
for _, c in ipairs(vim.lsp.get_clients()) do
  c.stop(true)
end
vim.wait(2000, function()
  return #vim.lsp.get_clients() == 0
end, 20)
if failed > 0 then
  vim.cmd("cquit 1")
else
  vim.cmd("qall!")
end
