--- approval/request (docs/protocol.md, "Approval"): the server asks before a tool
--- writes, runs or fetches. The request is answered asynchronously from the
--- handler's coroutine (vim.lsp runs server-request handlers in one), so the
--- editor stays usable while the person reviews:
---
---   edits  → a tab: header (Tool, File, Reason, Risk, Warning, keys) above
---            the current and the proposed text side by side in diff mode
---            (approval.ui = "float": a float with the unified diff instead)
---   others → a float with the header and the arguments (the command, the URL)
---
--- A review opens without taking the cursor (approval.focus = false): the
--- person goes there on purpose (:AgentlsReviews, gt). Keys, in the review's
--- own buffers only, prefixed so that no motion answers: <LocalLeader>y
--- approve · <LocalLeader>n reject (asks for an optional message) ·
--- <LocalLeader>A always (what the server's alwaysLabel says; only when
--- offered) · <LocalLeader>e edit the arguments · g? help · q later ·
--- ]f/[f next/previous file. Always, and approving a dangerous call, ask a
--- second time (type the word shown).
---
--- The header counts down the time left (review.lua reads expiresAt and
--- timeoutMs); at the deadline the review closes and says it expired.
---
--- This module keeps the queue of waiting requests and answers them; the
--- review on screen (header, tab, float, keys) is review.lua.
local M = {}

local api = vim.api
local log = require("agentls.log")
local review = require("agentls.review")
local deadline = require("agentls.deadline")

--- Pending approvals, oldest first.
--- @type table[]
M.queue = {}
--- The one on screen.
M.current = nil
--- How many approval/requests arrived (for tests and statistics).
M.received = 0

local seq = 0

-- The review on screen (review.lua), under the names it always had here.
for _, k in ipairs({ "shown_key", "pretty", "texts", "header", "map", "show_file", "rows", "render_float", "show" }) do
  M[k] = review[k]
end

local function changed()
  local n = #M.queue
  pcall(api.nvim_exec_autocmds, "User", { pattern = "AgentlsApproval", modeline = false, data = { pending = n } })
  pcall(vim.cmd, "redrawstatus!")
end

--- The number of calls waiting for approval.
function M.pending_count()
  return #M.queue
end

local function remove(entry)
  if entry.expiry then
    entry.expiry:stop()
    entry.expiry:close()
    entry.expiry = nil
  end
  for i, e in ipairs(M.queue) do
    if e == entry then
      table.remove(M.queue, i)
      break
    end
  end
  if M.current == entry then
    M.current = nil
  end
end

--- Takes entry out of the queue and off the screen, once: false when it
--- already was.
local function settle(entry)
  if entry.done then
    return false
  end
  entry.done = true
  remove(entry)
  review.close_ui(entry)
  return true
end

--- The position of entry in the queue (1 = oldest), 0 when not in it.
function M.position(entry)
  for i, e in ipairs(M.queue) do
    if e == entry then
      return i
    end
  end
  return 0
end

local function show_next()
  vim.schedule(function()
    if M.current then
      return
    end
    for _, e in ipairs(M.queue) do
      if not e.hidden then
        if not e.deferred then
          M.show_when_ready(e)
        end
        return
      end
    end
  end)
end

-- Decisions --------------------------------------------------------------------

--- entry (the one on screen when nil) while it waits for an answer, else nil.
local function waiting(entry)
  entry = entry or M.current
  if entry and not entry.done then
    return entry
  end
end

--- Answers an approval: decision "approve" | "reject" | "always".
--- @return boolean answered
function M.answer(entry, decision, message)
  entry = waiting(entry)
  if not entry then
    return false
  end
  entry.done = true
  remove(entry)
  review.close_ui(entry)
  if message == "" then
    message = nil
  end
  local p = entry.params
  log.append(string.format("[%s] %s: %s by you%s", p.callId or "?", p.tool or "?", ({
    approve = "approved",
    reject = "rejected",
    always = "always allowed",
  })[decision] or decision, message and (" — " .. message) or ""))
  entry.reply({ decision = decision, message = message })
  changed()
  show_next()
  return true
end

function M.approve(entry)
  return M.answer(entry, "approve")
end

--- Whether the request offers a decision: exactly its options (approve and
--- reject when a server sends none; never always).
function M.offers(entry, decision)
  local opts = entry and entry.params and entry.params.options
  if type(opts) ~= "table" or #opts == 0 then
    return decision == "approve" or decision == "reject"
  end
  return vim.tbl_contains(opts, decision)
end

--- What "always" covers, in the server's words (alwaysLabel).
function M.always_label(entry)
  local l = entry and entry.params and entry.params.alwaysLabel
  if type(l) == "string" and l ~= "" then
    return l
  end
  return "always allow " .. ((entry and entry.params and entry.params.tool) or "this tool")
end

--- Asks the second, distinct confirmation of an answer that cannot be taken
--- back: the person types word. on_yes runs only then.
local function confirm_word(prompt, word, on_yes)
  if review.config().confirm_irreversible == false then
    return on_yes()
  end
  vim.ui.input({ prompt = string.format("%s — type %s to confirm: ", prompt, word) }, function(input)
    if input ~= nil and vim.trim(input):lower() == word then
      on_yes()
    elseif input ~= nil then
      require("agentls").echo_line("agentls: not confirmed; the review is still waiting", vim.log.levels.WARN)
    end
  end)
end

--- The waiting entry (entry, else the current one) when it offers decision,
--- else nil; "always" not offered is also said to the person.
local function offering(entry, decision)
  entry = waiting(entry)
  if entry and not M.offers(entry, decision) then
    if decision == "always" then
      require("agentls").echo_line("agentls: always is not offered for this call", vim.log.levels.WARN)
    end
    return nil
  end
  return entry
end

--- The approve key: a dangerous call asks to confirm first.
function M.approve_key(entry)
  entry = offering(entry, "approve")
  if not entry then
    return false
  end
  if entry.params.risk == "dangerous" then
    confirm_word(string.format("Approve the DANGEROUS %s (cannot be taken back)", entry.params.tool or "call"), "yes", function()
      M.approve(entry)
    end)
    return true
  end
  return M.approve(entry)
end

--- The always key: asks to confirm first (it covers later calls too).
function M.always_key(entry)
  entry = offering(entry, "always")
  if not entry then
    return false
  end
  confirm_word(M.always_label(entry) .. " (for later calls too; :AgentlsRules revokes)", "always", function()
    M.always(entry)
  end)
  return true
end

function M.always(entry)
  entry = offering(entry, "always")
  return entry ~= nil and M.answer(entry, "always")
end

--- Approves with arguments the person changed (modifiedArguments; the server
--- validates them again). args: a table, or nil to ask (JSON, prefilled).
function M.edit_arguments(entry, args)
  entry = waiting(entry)
  if not entry then
    return false
  end
  local function approve_with(a)
    if not settle(entry) then
      return
    end
    local p = entry.params
    log.append(string.format("[%s] %s: approved by you with changed arguments %s", p.callId or "?", p.tool or "?",
      vim.json.encode(a):gsub("\\/", "/")))
    entry.reply({ decision = "approve", modifiedArguments = a })
    changed()
    show_next()
  end
  if args ~= nil then
    approve_with(args)
    return true
  end
  local current = entry.params.arguments
  local text = vim.json.encode(type(current) == "table" and next(current) ~= nil and current or vim.empty_dict()):gsub("\\/", "/")
  vim.ui.input({ prompt = string.format("%s arguments (JSON; Enter approves with them): ", entry.params.tool or ""), default = text }, function(input)
    if input == nil then
      return
    end
    local a, err = require("agentls").parse_args(input)
    if not a then
      vim.notify(err, vim.log.levels.ERROR)
      return
    end
    approve_with(a)
  end)
  return true
end

--- Rejects; asks for an optional message for the agent unless one is given
--- (an empty answer rejects without one; <Esc> goes back to the review).
function M.reject(entry, message)
  entry = waiting(entry)
  if not entry then
    return false
  end
  if message ~= nil or review.config().reject_message == false then
    return M.answer(entry, "reject", message)
  end
  vim.ui.input({ prompt = string.format("Reject %s — message for the agent (optional): ", entry.params.tool or "") }, function(input)
    if input == nil then
      return
    end
    M.answer(entry, "reject", input)
  end)
  return true
end

function M.toggle_help(entry)
  entry = entry or M.current
  if not entry then
    return
  end
  entry.help = not entry.help
  review.render_header(entry)
end

--- Closes the view; the call keeps waiting (:AgentlsPending reopens it).
function M.hide(entry, opts)
  entry = waiting(entry)
  if not entry then
    return
  end
  entry.hidden = true
  review.close_ui(entry)
  if M.current == entry then
    M.current = nil
  end
  if not (opts and opts.quiet) then
    require("agentls").echo_line(
      string.format("agentls: %s is still waiting for your approval (:AgentlsReviews)", entry.params.tool or "a call"),
      vim.log.levels.INFO
    )
  end
  changed()
end

--- Opens the oldest waiting review, and goes there.
function M.open_pending()
  local e = M.current or M.queue[1]
  if not e then
    require("agentls").echo_line("agentls: no call is waiting for approval", vim.log.levels.INFO)
    return false
  end
  return M.show(e, { focus = true })
end

--- One line about a waiting review, for lists.
function M.describe(entry)
  local p = entry.params
  local args = type(p.arguments) == "table" and p.arguments or {}
  local what = ""
  if type(args.command) == "string" then
    what = " `" .. args.command:gsub("\n", " ⏎ ") .. "`"
  elseif type(args.path) == "string" then
    what = " " .. args.path
  elseif type(args.url) == "string" then
    what = " " .. args.url
  elseif type(args.from) == "string" then
    what = " " .. args.from
  elseif type(args.source) == "string" then
    what = " " .. args.source
  end
  local left = deadline.time_left(entry)
  return string.format("%s: %s%s [%s]%s", review.who(entry), p.tool or "?", what, p.risk or "?", left and (" — " .. left:gsub(" %(.*", "")) or "")
end

--- :AgentlsReviews: lists every waiting review; the chosen one opens, with the cursor in it.
function M.pick()
  if #M.queue == 0 then
    require("agentls").echo_line("agentls: no call is waiting for approval", vim.log.levels.INFO)
    return false
  end
  vim.ui.select(vim.list_slice(M.queue), {
    prompt = string.format("agentls: %d review(s) waiting", #M.queue),
    format_item = M.describe,
    kind = "agentls_review",
  }, function(e)
    if e and not e.done then
      M.show(e, { focus = true })
    end
  end)
  return true
end

--- The server gave up on a call (timeout, cancel) or it ended: its approval goes away.
--- The server's own rejection at the deadline (within the clocks' skew),
--- when it comes before the local timer, is still the deadline passing: the
--- review says it expired.
function M.expire(call_id, status)
  for _, e in ipairs(vim.list_slice(M.queue)) do
    local left = e.params.callId == call_id and status == "rejected" and deadline.ms_left(e)
    if left and left <= deadline.skew_ms then
      M.timed_out(e)
    elseif e.params.callId == call_id and settle(e) then
      log.append(string.format("[%s] %s: approval withdrawn by the server (%s)", call_id, e.params.tool or "?", status or "ended"))
      changed()
      show_next()
    end
  end
end

--- The deadline passed without an answer: the review closes and says it
--- expired. No answer is sent: the server rejects the call by itself then
--- (docs/protocol.md, "Approval"), as when it withdraws a call (M.expire).
function M.timed_out(entry)
  if not settle(entry) then
    return
  end
  local p = entry.params
  log.append(string.format("[%s] %s: expired — no answer before the deadline, rejected by itself", p.callId or "?", p.tool or "?"))
  require("agentls").echo_line(string.format("agentls: the review of %s by %s expired: no answer in time, the call is rejected",
    p.tool or "a call", review.who(entry)), vim.log.levels.WARN)
  changed()
  show_next()
end

--- Closes entry's review at its deadline, on screen or not.
local function arm_expiry(entry)
  local left = deadline.ms_left(entry)
  if not left then
    return
  end
  entry.expiry = vim.uv.new_timer()
  entry.expiry:start(left, 0, vim.schedule_wrap(function()
    M.timed_out(entry)
  end))
end

--- A client stopped: its approvals go away unanswered.
function M.drop_client(client_id)
  for _, e in ipairs(vim.list_slice(M.queue)) do
    if e.client_id == client_id then
      settle(e)
    end
  end
  changed()
end

-- The handler ---------------------------------------------------------------

--- Modes in which the person is typing: the review waits for them to end,
--- so keystrokes meant for the text never land in (or answer) the review.
local busy_modes = { i = true, ic = true, ix = true, R = true, Rc = true, Rx = true, Rv = true, Rvc = true, Rvx = true, c = true, cv = true, t = true, s = true, S = true }

--- Shows the review now, or when the person leaves insert/command-line mode.
function M.show_when_ready(entry)
  local mode = api.nvim_get_mode().mode
  if not busy_modes[mode] then
    M.show(entry)
    return
  end
  entry.deferred = true
  require("agentls").echo_line(string.format("agentls: %s wants to run %s — the review opens when you leave %s mode (:AgentlsReviews)",
    review.who(entry), entry.params.tool or "a call", mode:sub(1, 1) == "c" and "command-line" or "insert"), vim.log.levels.INFO)
  api.nvim_create_autocmd("ModeChanged", {
    pattern = "*:n*",
    once = true,
    callback = function()
      vim.schedule(function()
        if not entry.deferred then
          return -- shown (or hidden) meanwhile
        end
        entry.deferred = nil
        if not entry.done and M.current == nil then
          M.show(entry)
        end
      end)
    end,
  })
end

local function enqueue(entry)
  table.insert(M.queue, entry)
  arm_expiry(entry)
  local p = entry.params
  if p.warning and p.warning ~= vim.NIL and p.warning ~= "" then
    log.append(string.format("[%s] %s: warning: %s", p.callId or "?", p.tool or "?", p.warning))
  end
  changed()
  if M.current == nil then
    M.show_when_ready(entry)
  else
    review.render_header(M.current)
    require("agentls").echo_line(string.format("agentls: %d calls waiting for approval (:AgentlsReviews)", #M.queue), vim.log.levels.INFO)
  end
end

--- A new entry for a request; reply(answer) sends the answer.
function M.new_entry(params, client_id, reply)
  seq = seq + 1
  local entry = { id = seq, params = params or {}, client_id = client_id, reply = reply, file_index = 1 }
  deadline.arrived(entry)
  return entry
end

--- Watches the open buffers of an edit's files: a change while the review is
--- open makes the proposal stale (the server's edit is for the earlier text).
local function watch_buffers(entry)
  for _, f in ipairs(review.files_of(entry)) do
    if f.operation ~= "create" then
      local b = vim.fn.bufnr(review.abs_path(entry, f))
      if b ~= -1 and api.nvim_buf_is_loaded(b) then
        api.nvim_buf_attach(b, false, {
          on_lines = function()
            if entry.done then
              return true
            end
            entry.changed_files = entry.changed_files or {}
            if not entry.changed_files[f.path] then
              entry.changed_files[f.path] = true
              vim.schedule(function()
                if not entry.done then
                  review.render_header(entry)
                end
              end)
            end
          end,
        })
      end
    end
  end
end

--- Handler of the approval/request server request. It yields the coroutine
--- vim.lsp runs it in, and resumes it with the person's answer.
function M.handler(_, params, ctx)
  M.received = M.received + 1
  local co, is_main = coroutine.running()
  if co and not is_main then
    local entry = M.new_entry(params, ctx and ctx.client_id, function(answer)
      vim.schedule(function()
        local ok, err = coroutine.resume(co, answer)
        if not ok then
          log.append("approval reply failed: " .. tostring(err))
        end
      end)
    end)
    watch_buffers(entry)
    enqueue(entry)
    return coroutine.yield()
  end
  -- Not in a coroutine (another Neovim build): wait here, the UI still runs.
  local answer
  local entry = M.new_entry(params, ctx and ctx.client_id, function(a)
    answer = a
  end)
  watch_buffers(entry)
  enqueue(entry)
  vim.wait(300000, function()
    return answer ~= nil or entry.done
  end, 20)
  if answer == nil then
    M.answer(entry, "reject", "no answer")
  end
  return answer or { decision = "reject", message = "no answer" }
end

return M