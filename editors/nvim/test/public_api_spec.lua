-- The plugin builds on Neovim's public API only: no private names of
-- Neovim (vim.lsp._changetracking, client._…, vim._…, vim.lsp.util.buf_versions
-- and other undocumented fields), so a Neovim release may change its
-- internals without breaking it. The version tracker that replaces
-- buf_versions is checked against Neovim's own numbering (read here, in the
-- test, as the oracle).
local H = require("helpers")
local api = vim.api

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin_root = vim.fn.fnamemodify(here, ":h")

-- Lua patterns of private or undocumented names, with what each is.
local forbidden = {
  { "vim%.lsp%._", "a private vim.lsp module or function (vim.lsp._…)" },
  { "[\"']vim%.lsp%._", "a private vim.lsp module (require \"vim.lsp._…\")" },
  { "[\"']vim%._", "a private vim module (require \"vim._…\")" },
  { "vim%._%a", "a private vim function (vim._…)" },
  { "[%w_%]%)]%._[%a_]", "a private field (x._name)" },
  { "[%w_%]%)]:_[%a_]", "a private method (x:_name())" },
  { "buf_versions", "vim.lsp.util.buf_versions (undocumented)" },
  { "server_info", "client.server_info (not a field in Neovim 0.10)" },
  { "_uninitialized", "the private get_clients filter _uninitialized" },
  { "vim%.lsp%.[%w_%.]+%s*=[^=]", "a vim.lsp function or field replaced (monkey-patched)" },
  { "util%.[%w_]+%s*=[^=]", "a vim.lsp.util function replaced (monkey-patched)" },
}

--- The plugin's Lua files (lua/ and plugin/), relative to the plugin root.
local function plugin_files()
  local out = {}
  for _, dir in ipairs({ "lua", "plugin" }) do
    for name, kind in vim.fs.dir(plugin_root .. "/" .. dir, { depth = 5 }) do
      if kind == "file" and name:match("%.lua$") then
        table.insert(out, dir .. "/" .. name)
      end
    end
  end
  table.sort(out)
  return out
end

--- Where text uses a forbidden name: "file:line: what" for each, outside comments.
local function violations(file, text)
  local found = {}
  local n = 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local code = line:gsub("%-%-.*$", "")
    for _, f in ipairs(forbidden) do
      if code:find(f[1]) then
        table.insert(found, string.format("%s:%d: %s: %s", file, n, f[2], vim.trim(line)))
      end
    end
  end
  return found
end

describe("public API only", function()
  after_each(H.reset)

  it("the check finds each kind of private name", function()
    local samples = {
      'require("vim.lsp._changetracking").flush(client)',
      "local v = vim.lsp.util.buf_versions[buf]",
      "client._log_prefix = 1",
      "client:_notify('x')",
      "vim._with({}, f)",
      "local s = require('vim._system')",
      "local i = c.server_info",
      "vim.lsp.get_clients({ _uninitialized = true })",
      "util.rename = function(old, new) end",
      "vim.lsp.util.apply_workspace_edit = wrapped",
      "vim.lsp.buf_request =f",
    }
    for _, s in ipairs(samples) do
      H.truthy(#violations("sample.lua", s) > 0, "a violation in " .. s)
    end
    H.eq({}, violations("sample.lua", "-- vim.lsp._changetracking in a comment"), "comments")
    H.eq({}, violations("sample.lua", "local ok = cm(client, 'request', m, p, h)"), "public call")
    H.eq({}, violations("sample.lua", "local util = vim.lsp.util"), "a local name for a module")
    H.eq({}, violations("sample.lua", "if util.rename == nil then end"), "a comparison")
  end)

  it("the plugin's Lua files use no private Neovim name", function()
    local files = plugin_files()
    H.truthy(vim.tbl_contains(files, "lua/agentls/edit.lua"), "lua/agentls/edit.lua is among " .. vim.inspect(files))
    H.truthy(vim.tbl_contains(files, "plugin/agentls.lua"), "plugin/agentls.lua is among " .. vim.inspect(files))
    local found = {}
    for _, file in ipairs(files) do
      local text = table.concat(vim.fn.readfile(plugin_root .. "/" .. file), "\n")
      vim.list_extend(found, violations(file, text))
    end
    H.eq({}, found, "private names")
  end)

  it("document versions follow Neovim's own numbering (didOpen, changes, reload, save as)", function()
    local ws, buf = H.project({ ["a.txt"] = "one\n" }, "a.txt")
    local versions = require("agentls.versions")
    local function same(what)
      H.eq(vim.lsp.util.buf_versions[buf], versions.version(buf), what)
    end
    same("after didOpen")
    H.eq(0, versions.version(buf), "didOpen is version 0")
    api.nvim_buf_set_lines(buf, 0, -1, false, { "two" })
    same("after a change")
    api.nvim_buf_set_lines(buf, 0, 0, false, { "zero" })
    same("after a second change")
    H.truthy(versions.version(buf) > 0, "a change moves the version")
    api.nvim_buf_call(buf, function()
      vim.cmd("silent write")
    end)
    same("after a write")
    api.nvim_buf_call(buf, function()
      vim.cmd("silent edit!")
    end)
    same("after :edit! (didClose, didOpen)")
    api.nvim_buf_set_lines(buf, 0, -1, false, { "three" })
    api.nvim_buf_call(buf, function()
      vim.cmd("silent saveas " .. vim.fn.fnameescape(ws .. "/b.txt"))
    end)
    same("after :saveas (didOpen under the new name)")
    H.eq(nil, versions.version(api.nvim_create_buf(false, true)), "a buffer agentls does not follow")
  end)
end)
