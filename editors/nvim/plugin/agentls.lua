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

cmd("AgentlsTools", function()
  require("agentls").pick_tool()
end, { desc = "agentls: pick a tool and run it with JSON arguments" })

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

cmd("AgentlsLog", function()
  require("agentls").open_log()
end, { desc = "agentls: tool events and output" })

cmd("AgentlsPending", function()
  require("agentls.approval").open_pending()
end, { desc = "agentls: review the oldest call waiting for approval" })

cmd("AgentlsReviews", function()
  require("agentls.approval").pick()
end, { desc = "agentls: list the calls waiting for approval and open one" })

cmd("AgentlsRules", function()
  require("agentls").pick_rules()
end, { desc = "agentls: list the remembered always answers and revoke one" })

cmd("AgentlsStart", function()
  local agentls = require("agentls")
  if not agentls.attach(0) then
    agentls.get_client()
  end
end, { desc = "agentls: start the server for this buffer's workspace" })

cmd("AgentlsStop", function()
  require("agentls").stop()
end, { desc = "agentls: stop the servers" })

cmd("AgentlsRestart", function()
  require("agentls").restart()
end, { desc = "agentls: restart the servers" })
