--- :checkhealth agentls
local M = {}

function M.check()
  local h = vim.health
  local agentls = require("agentls")

  h.start("agentls: Neovim")
  local v = vim.version()
  if vim.fn.has("nvim-0.10") == 1 then
    h.ok(string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch))
  else
    h.error(string.format("Neovim %d.%d.%d: agentls needs 0.10 or newer", v.major, v.minor, v.patch))
  end
  if agentls.is_setup() then
    h.ok('require("agentls").setup() was called' .. (agentls.config.autostart and " (autostart on)" or " (autostart off)"))
  else
    h.warn('require("agentls").setup() was not called: the server does not start on buffers', {
      'Add require("agentls").setup({ cmd = { "/path/to/agentls" } }) to your config',
    })
  end

  h.start("agentls: server binary")
  local cmd, err = agentls.resolve_cmd()
  if type(cmd) == "function" then
    h.ok("cmd is a function (a connection made by the config)")
  elseif not cmd then
    h.error(err or "no command", { "Build it: go build -o bin/agentls ./cmd/agentls", "Set cmd in setup()" })
  else
    h.ok("cmd: " .. table.concat(cmd, " "))
    local out = vim.fn.system({ cmd[1], "version" })
    if vim.v.shell_error == 0 then
      h.ok("agentls version: " .. vim.trim(out):gsub("\n", "; "))
    else
      h.warn("`" .. cmd[1] .. " version` failed: " .. vim.trim(out))
    end
  end

  h.start("agentls: clients")
  local clients = agentls.clients()
  if #clients == 0 then
    h.info("no agentls client is running (open a file of a workspace, or :AgentlsStart)")
  end
  for _, c in ipairs(clients) do
    local caps = c.server_capabilities or {}
    local exp = caps.experimental and caps.experimental.agentls
    local info = agentls.initialize_info(c)
    local root = (c.workspace_folders and c.workspace_folders[1] and c.workspace_folders[1].name) or c.root_dir or "?"
    local bufs = vim.tbl_count(c.attached_buffers or {})
    if exp then
      h.ok(string.format(
        "client %d: %s %s, root %s, protocol %s, %s tools, %d buffers",
        c.id,
        info.name or "agentls",
        info.version or "",
        root,
        tostring(exp.protocolVersion),
        tostring(exp.tools),
        bufs
      ))
      if exp.protocolVersion ~= 1 then
        h.warn("this plugin speaks protocol version 1; the server says " .. tostring(exp.protocolVersion))
      end
    elseif c.initialized then
      h.warn(string.format("client %d (root %s): the server did not announce experimental.agentls", c.id, root))
    else
      h.info(string.format("client %d (root %s): starting", c.id, root))
    end
  end

  h.start("agentls: approvals")
  local n = agentls.pending_count()
  if n > 0 then
    h.warn(string.format("%d calls are waiting for approval (:AgentlsPending)", n))
  else
    h.ok("no call is waiting for approval")
  end
  h.info("approval UI: " .. tostring(agentls.config.approval.ui) .. "; save after apply: " .. tostring(agentls.config.save_after_apply))
end

return M
