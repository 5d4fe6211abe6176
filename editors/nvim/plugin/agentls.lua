-- Commands of agentls. The server starts on buffers only after
-- require("agentls").setup({...}); the commands work before it with the defaults.
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_err_writeln("agentls needs Neovim 0.10 or newer")
  return
end

local cmd = vim.api.nvim_create_user_command

--- A command that calls require(module)[fn]().
local function simple(name, module, fn, desc)
  cmd(name, function()
    require(module)[fn]()
  end, { desc = "agentls: " .. desc })
end

simple("AgentlsTools", "agentls", "pick_tool", "pick a tool and run it with JSON arguments")

cmd("AgentlsCall", function(o)
  local tool, rest = o.args:match("^%s*(%S+)%s*(.*)$")
  require("agentls").command_call(tool, rest)
end, {
  nargs = "+",
  desc = "agentls: run a tool: :AgentlsCall {tool} {json}",
  complete = function(arglead, cmdline)
    if cmdline:match("^%s*%S+%s+%S+%s") then
      return {}
    end
    return require("agentls").complete_tools(arglead)
  end,
})

simple("AgentlsLog", "agentls", "open_log", "tool events and output")
simple("AgentlsPending", "agentls.approval", "open_pending", "review the oldest call waiting for approval")
simple("AgentlsReviews", "agentls.approval", "pick", "list the calls waiting for approval and open one")
simple("AgentlsRules", "agentls", "pick_rules", "list the remembered always answers and revoke one")

cmd("AgentlsStart", function()
  local agentls = require("agentls")
  if not agentls.attach(0) then
    agentls.get_client()
  end
end, { desc = "agentls: start the server for this buffer's workspace" })

simple("AgentlsStop", "agentls", "stop", "stop the servers")
simple("AgentlsRestart", "agentls", "restart", "restart the servers")
