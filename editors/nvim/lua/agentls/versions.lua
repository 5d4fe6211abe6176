--- The version of a buffer's document as the agentls server knows it, kept
--- with public API only (nvim_buf_attach, autocommands) instead of reading
--- Neovim's undocumented vim.lsp.util.buf_versions.
---
--- Neovim 0.10 numbers a document's versions so: textDocument/didOpen has
--- version 0 (also the didOpen it sends again after :e! reloads the buffer,
--- or after a write under a new name), and every didChange has the
--- b:changedtick of the last change it reports. track(bufnr) follows the
--- same rules from the moment agentls attaches to the buffer (its on_attach
--- runs right after the didOpen); version(bufnr) is nil for a buffer it
--- does not follow.
local M = {}

local api = vim.api

local state = {} -- bufnr -> { version = integer, name = string }

local function attached(bufnr)
  return #vim.lsp.get_clients({ bufnr = bufnr, name = "agentls" }) > 0
end

--- Follows bufnr from its didOpen on (again from 0 when called again).
--- @param bufnr integer
function M.track(bufnr)
  local s = state[bufnr]
  if s then
    s.version, s.name = 0, api.nvim_buf_get_name(bufnr)
    return
  end
  state[bufnr] = { version = 0, name = api.nvim_buf_get_name(bufnr) }
  local function stop()
    state[bufnr] = nil
    pcall(api.nvim_del_augroup_by_name, "agentls_versions_" .. bufnr)
  end
  api.nvim_buf_attach(bufnr, false, {
    on_lines = function(_, b, changedtick)
      if not state[b] then
        return true
      end
      if not attached(b) then
        stop()
        return true
      end
      state[b].version = changedtick
    end,
    on_reload = function(_, b)
      if state[b] then
        state[b].version = 0
      end
    end,
    on_detach = function()
      stop()
    end,
  })
  local group = api.nvim_create_augroup("agentls_versions_" .. bufnr, { clear = true })
  api.nvim_create_autocmd("BufWritePost", {
    group = group,
    buffer = bufnr,
    callback = function(ev)
      local s2 = state[ev.buf]
      local name = api.nvim_buf_get_name(ev.buf)
      if s2 and name ~= s2.name then
        s2.version, s2.name = 0, name
      end
    end,
  })
end

--- The document version the server has (or will have, once pending changes
--- go out) for bufnr, or nil when agentls does not follow it.
--- @param bufnr integer
--- @return integer?
function M.version(bufnr)
  local s = state[bufnr]
  if s and attached(bufnr) then
    return s.version
  end
  return nil
end

return M
