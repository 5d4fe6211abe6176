--- tool/event notifications and $/progress of tool calls, into the log.
local M = {}

local log = require("agentls.log")

--- Progress routes of calls made through require("agentls").call, by token.
--- @type table<string, {call_id: string, tool: string, on_progress?: fun(v: table), partial?: fun(v: any)}>
local routes = {}
--- Calls (by callId) whose $/progress is logged, so their mirrored
--- tool/event progress is not logged twice.
local by_call = {}

--- Listeners of tool/event (for front-ends): fn(event, client_id).
M.listeners = {}

function M.route(token, r)
  routes[token] = r
  if not r.partial then
    by_call[r.call_id] = token
  end
end

function M.unroute(token)
  local r = routes[token]
  if r and by_call[r.call_id] == token then
    by_call[r.call_id] = nil
  end
  routes[token] = nil
end

local function short_json(v, max)
  if v == nil then
    return ""
  end
  local ok, s = pcall(vim.json.encode, v)
  s = ok and s:gsub("\\/", "/") or vim.inspect(v)
  max = max or 160
  if #s > max then
    s = s:sub(1, max) .. "…"
  end
  return s
end

--- Formats a tool/event as one log line.
function M.format_event(e)
  local prefix = string.format("[%s] %s", e.callId or "?", e.tool or "?")
  local k = e.kind
  if k == "call" then
    return prefix .. " call" .. log.part(" by %s", e.agent) .. " " .. short_json(e.arguments)
      .. (e.needsApproval and " (needs approval)" or "")
  elseif k == "awaitingApproval" then
    return prefix .. " awaiting approval" .. log.part(" (risk: %s)", e.risk)
  elseif k == "progress" then
    return prefix .. " progress" .. log.part(" %d%%", e.percent) .. log.part(": %s", e.message)
  elseif k == "result" then
    return prefix .. " → " .. (e.status or "?") .. log.part(": %s", e.message)
  elseif k == "fileChanged" then
    return string.format("%s %s %s", prefix, e.operation or "changed", e.path or "?")
  end
  return prefix .. " " .. tostring(k) .. " " .. short_json(e)
end

--- Handler of the tool/event notification.
function M.on_event(_, e, ctx)
  if type(e) ~= "table" then
    return
  end
  local skip = e.kind == "progress" and e.callId and by_call[e.callId] ~= nil
  if not skip then
    local line = M.format_event(e)
    log.append(line)
    local agentls = require("agentls")
    local level = agentls.config.log and agentls.config.log.notify_level
    if level then
      vim.notify("agentls: " .. line, level)
    end
  end
  if e.kind == "result" and e.callId then
    require("agentls.approval").expire(e.callId, e.status)
  end
  for _, fn in ipairs(M.listeners) do
    pcall(fn, e, ctx and ctx.client_id)
  end
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "AgentlsEvent", modeline = false, data = e })
end

--- Handler of $/progress: the tokens of agentls calls go to the log (and the
--- call's callbacks); other tokens to Neovim's own handler.
function M.on_progress(err, params, ctx, config)
  local token = params and params.token
  local r = token and routes[token]
  if not r then
    return vim.lsp.handlers["$/progress"](err, params, ctx, config)
  end
  local v = params.value
  if r.partial then
    pcall(r.partial, v)
    return
  end
  if type(v) == "table" then
    local prefix = string.format("[%s] %s", r.call_id, r.tool)
    if v.kind == "begin" then
      log.append(prefix .. " started")
    elseif v.kind == "report" then
      local msg = v.message or ""
      local lines = vim.split(msg, "\n", { plain = true })
      if lines[#lines] == "" then
        table.remove(lines)
      end
      if #lines > 0 or v.percentage then
        local out = { prefix .. (v.percentage and string.format(" %d%%", v.percentage) or "") .. " │ " .. (lines[1] or "") }
        for i = 2, #lines do
          table.insert(out, string.rep(" ", 9 + #prefix) .. " │ " .. lines[i])
        end
        log.append(out)
      end
    elseif v.kind == "end" then
      log.append(prefix .. " ended" .. (v.message and (": " .. v.message) or ""))
    end
  end
  if r.on_progress then
    pcall(r.on_progress, v)
  end
  -- Neovim's handler keeps client.progress and fires LspProgress (statuslines).
  pcall(vim.lsp.handlers["$/progress"], err, params, ctx, config)
end

return M
