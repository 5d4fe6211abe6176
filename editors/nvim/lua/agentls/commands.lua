--- The person's side of the tools: a result formatted and shown (the
--- agentls://result window), :AgentlsCall's arguments, the :AgentlsTools
--- and :AgentlsRules pickers. init.lua re-exports these under the same names.
local C = {}

local api = vim.api
local log = require("agentls.log")

--- The agentls module (the client, the calls), loaded on first use: it loads this one.
local function A()
  return require("agentls")
end

--- Formats a ToolResult (or an RPC error) as lines for a person.
--- @return string[] lines, integer level
function C.format_result(result, err)
  local lines = {}
  if err then
    vim.list_extend(lines, vim.split("agentls: request failed: " .. tostring(err.message or vim.inspect(err)), "\n", { plain = true }))
    return lines, vim.log.levels.ERROR
  end
  if type(result) ~= "table" then
    return { "agentls: empty result" }, vim.log.levels.ERROR
  end
  table.insert(lines, string.format("%s · %s", result.tool or "?", result.status or "?")
    .. log.part(" · %s", result.callId)
    .. log.part(" · %d ms", result.durationMs)
    .. log.part(" · approved by %s", result.approvedBy ~= "none" and result.approvedBy or nil))
  local function add(text)
    vim.list_extend(lines, vim.split(text, "\n", { plain = true }))
  end
  local level = vim.log.levels.INFO
  if result.status == "error" then
    level = vim.log.levels.ERROR
    local e = result.error or {}
    add(string.format("error %s: %s", e.code or "?", e.message or ""))
    local details = type(e.details) == "table" and e.details or {}
    for _, v in ipairs(details.violations or {}) do
      add(string.format("  %s: %s", v.pointer == "" and "/" or (v.pointer or "?"), v.reason or ""))
    end
  elseif result.status == "rejected" or result.status == "cancelled" then
    level = vim.log.levels.WARN
    if result.message then
      add("message: " .. result.message)
    end
  end
  table.insert(lines, string.rep("─", 40))
  local body = result.display or result.content or ""
  vim.list_extend(lines, vim.split(body, "\n", { plain = true }))
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines, level
end

--- :AgentlsRules: lists the remembered "always" answers; the chosen one is
--- revoked after a confirmation, and the server asks again for such calls.
function C.pick_rules()
  A().rules(function(rules, err)
    if not rules then
      A().echo_line("agentls: approval/rules failed: " .. tostring(err and err.message), vim.log.levels.ERROR)
      return
    end
    if #rules == 0 then
      A().echo_line("agentls: no remembered answers: every call asks as configured", vim.log.levels.INFO)
      return
    end
    vim.ui.select(rules, {
      prompt = "agentls: remembered answers (choose one to revoke)",
      format_item = function(r)
        return string.format("%s%s", r.label or r.key, r.persisted and "  [persisted]" or "  [this session]")
      end,
      kind = "agentls_rule",
    }, function(rule)
      if not rule then
        return
      end
      vim.ui.select({ "Revoke: ask again for these calls", "Keep" }, { prompt = "agentls: " .. (rule.label or rule.key) }, function(choice)
        if not choice or not choice:match("^Revoke") then
          return
        end
        A().rules(function(_, e2, removed)
          if e2 then
            A().echo_line("agentls: could not revoke: " .. tostring(e2.message), vim.log.levels.ERROR)
          elseif removed then
            A().echo_line("agentls: revoked: " .. (rule.label or rule.key), vim.log.levels.INFO)
          else
            A().echo_line("agentls: that answer was already gone", vim.log.levels.WARN)
          end
        end, { remove = rule.id })
      end)
    end)
  end)
end

--- Shows a result in the agentls://result window; errors are also notified.
function C.show_result(result, err)
  local lines, level = C.format_result(result, err)
  if level >= vim.log.levels.ERROR then
    local n = math.min(#lines, 8)
    local msg = {}
    for i = 1, n do
      if not lines[i]:match("^─") then
        table.insert(msg, lines[i])
      end
    end
    vim.notify(table.concat(msg, "\n"), level)
  elseif level >= vim.log.levels.WARN then
    -- A rejection or a cancellation: one line that fits the command line,
    -- no "Press ENTER" prompt; the whole result is in the agentls://result window.
    local parts = {}
    for i = 1, math.min(#lines, 3) do
      if not lines[i]:match("^─") and lines[i] ~= "" then
        table.insert(parts, lines[i])
      end
    end
    A().echo_line(table.concat(parts, " — "), level)
  end
  local buf = vim.fn.bufnr("agentls://result")
  if buf == -1 or not api.nvim_buf_is_valid(buf) then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, "agentls://result")
    vim.bo[buf].bufhidden = "hide"
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd("botright split")
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    api.nvim_win_set_height(win, math.max(3, math.min(#lines + 1, 15)))
  end
  A().last_result = result
  return buf
end

--- A JSON skeleton of a tool's required arguments, for the picker.
local function skeleton(tool)
  local schema = tool.inputSchema or {}
  local props = schema.properties or {}
  local out = {}
  for _, name in ipairs(schema.required or {}) do
    local p = props[name] or {}
    local t = p.type
    local v = ""
    if t == "integer" or t == "number" then
      v = 0
    elseif t == "boolean" then
      v = false
    elseif t == "array" then
      v = {}
    elseif t == "object" then
      v = vim.empty_dict()
    end
    out[name] = v
  end
  if next(out) == nil then
    return "{}"
  end
  return vim.json.encode(out)
end

--- Decodes the JSON arguments typed by a person; nil and a message when invalid.
function C.parse_args(text)
  text = vim.trim(text or "")
  if text == "" then
    return vim.empty_dict()
  end
  local ok, v = pcall(vim.json.decode, text)
  if not ok then
    return nil, "agentls: the arguments are not valid JSON: " .. tostring(v):gsub("^.-:%d+: ", "")
  end
  if type(v) ~= "table" or (next(v) ~= nil and vim.islist(v)) then
    return nil, "agentls: the arguments must be a JSON object, like {\"path\": \"main.go\"}"
  end
  return v
end

--- :AgentlsCall {tool} {json}
function C.command_call(tool, json_text)
  if not tool or tool == "" then
    vim.notify("agentls: usage: :AgentlsCall {tool} {json arguments}", vim.log.levels.ERROR)
    return
  end
  local args, err = C.parse_args(json_text)
  if not args then
    vim.notify(err, vim.log.levels.ERROR)
    return
  end
  return A().call(tool, args, nil)
end

--- :AgentlsTools: a picker of the tools; the chosen one is called with arguments typed as JSON.
function C.pick_tool()
  A().list(function(tools, err)
    if not tools then
      vim.notify("agentls: tool/list failed: " .. tostring(err and err.message), vim.log.levels.ERROR)
      return
    end
    vim.ui.select(tools, {
      prompt = "agentls tools",
      format_item = function(t)
        local a = t.annotations or {}
        return string.format("%-22s %s [%s]", t.name, t.title or "", a.approval or "?")
      end,
      kind = "agentls_tool",
    }, function(tool)
      if not tool then
        return
      end
      vim.ui.input({ prompt = tool.name .. " arguments (JSON): ", default = skeleton(tool) }, function(text)
        if text == nil then
          return
        end
        C.command_call(tool.name, text)
      end)
    end)
  end)
end

return C
