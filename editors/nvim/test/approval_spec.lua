-- The approval UI driven with synthetic approval/requests (no server): the
-- handler runs in a coroutine as vim.lsp runs it, the keys answer.
local H = require("helpers")
local api = vim.api
local approval = require("agentls.approval")

local request, wait_answer = H.request, H.wait_answer

local shell = {
  callId = "tc_shell1",
  tool = "shell_exec",
  arguments = { command = "rm -r build && make", timeout_ms = 1000 },
  reason = "rebuild from scratch",
  risk = "dangerous",
  warning = "rm -r deletes a directory tree",
  options = { "approve", "reject" },
  agent = "claude",
  cwd = "/work/project",
  timeoutSeconds = 300,
}

local echo = {
  callId = "tc_echo1",
  tool = "shell_exec",
  arguments = { command = "echo x" },
  risk = "execute",
  options = { "approve", "reject", "always" },
  alwaysLabel = "always allow `echo x …`",
}

local function multi()
  return {
    callId = "tc_multi",
    tool = "apply_patch",
    arguments = { patch = "..." },
    reason = "rename the helper",
    risk = "write",
    preview = {
      unifiedDiff = "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-old a\n+new a\n",
      files = {
        { path = "a.go", operation = "modify", oldText = "old a\n", newText = "new a\n" },
        { path = "b/new.go", operation = "create", newText = "package b\n" },
      },
    },
    options = { "approve", "reject", "always" },
  }
end

-- key asks to confirm: the wrong word keeps st waiting, then the right
-- word answers it with decision. Returns the first question (H.confirm's).
local function confirm_key(st, key, wrong, word, decision)
  local asked = H.confirm(wrong)
  H.feed(key)
  vim.wait(50)
  H.eq(nil, st.done, "not confirmed")
  H.confirm(word)
  H.feed(key)
  H.eq({ decision = decision }, wait_answer(st), "answer")
  return asked
end

describe("approval UI", function()
  before_each(function()
    require("agentls").setup({ cmd = { H.bin }, autostart = false, approval = { guard_ms = 0, focus = true } })
  end)
  after_each(H.reset)

  it("answers asynchronously from the handler's coroutine; the editor keeps running", function()
    local st = request(shell)
    H.eq(nil, st.done, "the handler yielded")
    H.eq(1, approval.pending_count(), "pending")
    -- The editor is usable meanwhile: timers and other work run.
    local ticked = false
    vim.defer_fn(function()
      ticked = true
    end, 10)
    H.wait(function()
      return ticked
    end, "a timer while the approval waits")
    H.eq(nil, st.done, "still waiting")
    H.confirm("yes") -- a dangerous call
    H.feed(H.APPROVE)
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
    H.eq(0, approval.pending_count(), "pending")
  end)

  it("a command request shows Tool, Agent, Command, In, Reason, Risk, Warning and the time left in a float", function()
    local st = request(shell)
    local e = approval.current
    H.eq("float", e.ui.kind, "float for a request without a file preview")
    local lines = H.win_lines(e.ui.win)
    -- Who asks, the tool, the agent, the folder, the command, why, the risk
    -- and its warning; the command and the other arguments in the body.
    H.contains_each(lines, { "agentls: claude wants to run shell_exec", "Tool:    shell_exec", "Agent:   claude",
      "In:      /work/project", "Command: rm -r build && make", "Reason:  rebuild from scratch",
      "Risk:    dangerous", "Warning: rm -r deletes a directory tree", "$ rm -r build && make",
      '"timeout_ms": 1000' }, "the review")
    H.truthy(table.concat(lines, "\n"):match("Expires: [45]:%d%d left %(rejected by itself at %d%d:%d%d:%d%d%)"), "time left")
    -- The warning is highlighted as an error.
    local marks = api.nvim_buf_get_extmarks(e.ui.buf, -1, 0, -1, { details = true })
    local groups = {}
    for _, m in ipairs(marks) do
      groups[m[4].hl_group] = true
    end
    H.truthy(groups.ErrorMsg, "ErrorMsg highlight")
    -- g? shows help, g? again hides it.
    local n = #lines
    H.feed("g?")
    H.contains(H.win_lines(e.ui.win), "later: close this view", "help shown")
    H.contains(H.win_lines(e.ui.win), "always is not offered for this call", "help on always")
    H.feed("g?")
    H.eq(n, #H.win_lines(e.ui.win), "help hidden")
    -- The dangerous call offers no always: the key does nothing.
    H.not_contains(lines, "always allow", "key line")
    H.stub(require("agentls"), "echo_line", function() end)
    H.feed(H.ALWAYS)
    H.eq(nil, st.done, "always refused")
    -- Approving it asks a second time: a wrong word keeps it waiting.
    confirm_key(st, H.APPROVE, "y", "yes", "approve")
  end)

  it("always is labelled with what it covers and asks to confirm", function()
    local st = request(echo)
    local lines = H.win_lines(approval.current.ui.win)
    H.contains(lines, "\\A always allow `echo x …`", "label")
    local asked = confirm_key(st, H.ALWAYS, "", "always", "always")
    H.contains(asked.prompt, "always allow `echo x …`", "prompt says what it covers")
  end)

  it("reject asks for a message; an empty message rejects without one", function()
    local st = request(shell)
    H.confirm("")
    H.feed(H.REJECT)
    H.eq({ decision = "reject" }, wait_answer(st), "answer")
  end)

  it("a multi-file preview opens a diff tab; ]f and [f switch files", function()
    local st = request(multi())
    local e = approval.current
    local ui = e.ui
    H.eq("tab", ui.kind, "tab")
    H.eq(3, #api.nvim_tabpage_list_wins(ui.tab), "header + two diff windows")
    -- The header window is tall enough for its wrapped lines: nothing cut.
    local hl = H.win_lines(ui.header_win)
    H.eq(approval.rows(hl, api.nvim_win_get_width(ui.header_win)), api.nvim_win_get_height(ui.header_win), "header height")
    H.contains(H.win_lines(ui.header_win), "Files:   2: [a.go (modify)], b/new.go (create)", "files")
    H.eq({ "old a" }, H.win_lines(ui.old_win), "current a.go")
    H.eq({ "new a" }, H.win_lines(ui.new_win), "proposed a.go")
    H.feed("]f")
    H.eq({}, vim.tbl_filter(function(l)
      return l ~= ""
    end, H.win_lines(ui.old_win)), "a new file has no current text")
    H.eq({ "package b" }, H.win_lines(ui.new_win), "proposed b/new.go")
    H.contains(H.win_lines(ui.header_win), "a.go (modify), [b/new.go (create)]", "current file marked")
    H.contains(vim.wo[ui.new_win].winbar, "b/new.go (create)", "winbar")
    H.feed("[f")
    H.eq({ "new a" }, H.win_lines(ui.new_win), "back to a.go")
    H.eq("a.go · proposed #" .. e.id, vim.fn.fnamemodify(api.nvim_buf_get_name(api.nvim_win_get_buf(ui.new_win)), ":t"), "tab label: the file's name")
    H.feed(H.APPROVE)
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
    H.eq(false, api.nvim_tabpage_is_valid(ui.tab), "tab closed")
    H.eq(1, #api.nvim_list_tabpages(), "back to one tab")
    vim.wait(20)
    local left = vim.tbl_filter(function(b)
      local n = api.nvim_buf_get_name(b)
      return (n:match("^agentls://") and n ~= "agentls://log") or n:match(" · proposed #") or n:match(" · current #") or n:match(" · review #")
    end, api.nvim_list_bufs())
    H.eq({}, left, "no buffer of the review is left")
  end)

  it("closing the approval tab by hand keeps the call waiting", function()
    local st = request(multi())
    local e = approval.current
    vim.cmd("tabclose")
    H.wait(function()
      return e.ui == nil
    end, "the view to be gone")
    H.eq(1, approval.pending_count(), "still pending")
    H.eq(nil, st.done, "not answered")
    require("agentls.approval").open_pending()
    H.truthy(e.ui and api.nvim_tabpage_is_valid(e.ui.tab), "reopened")
    approval.approve(e)
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
  end)

  it("a call that ended on the server (tool/event result) withdraws its approval", function()
    local st = request(shell)
    H.eq(1, approval.pending_count(), "pending")
    require("agentls.events").on_event(nil, { callId = "tc_shell1", tool = "shell_exec", kind = "result", status = "rejected" }, {})
    H.eq(0, approval.pending_count(), "withdrawn")
    H.eq(nil, approval.current, "nothing on screen")
    H.eq(nil, st.done, "no answer is sent for a withdrawn request")
    H.contains(require("agentls.log").lines(), "approval withdrawn by the server", "log")
  end)

  it("without a coroutine the handler waits for the answer itself", function()
    vim.defer_fn(function()
      approval.answer(approval.current, "reject", "not now")
    end, 30)
    local answer = approval.handler(nil, shell, {})
    H.eq({ decision = "reject", message = "not now" }, answer, "answer")
  end)

  it("a key typed right as the review opens is ignored (it was meant for the buffer)", function()
    require("agentls").setup({ cmd = { H.bin }, autostart = false, approval = { guard_ms = 300, focus = true } })
    local msgs = H.echoes()
    local st = request(echo)
    H.feed(H.APPROVE)
    H.eq(nil, st.done, "not answered")
    H.contains(msgs, "press the key again", "message")
    vim.wait(350)
    H.feed(H.APPROVE)
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
  end)

  it("a long command wraps in the float and is shown whole", function()
    local long = vim.deepcopy(shell)
    long.arguments = { command = "echo " .. string.rep("abcdefghij", 30) .. " END-OF-COMMAND" }
    local st = request(long)
    local win = approval.current.ui.win
    H.eq(true, vim.wo[win].wrap, "wrap")
    H.contains(H.win_lines(win), "END-OF-COMMAND", "whole command")
    local height = api.nvim_win_get_height(win)
    local ok = vim.fn.screenpos(win, #H.win_lines(win), 1).row > 0
    H.truthy(ok and height >= 12, "the float is tall enough for the wrapped lines (" .. height .. ")")
    approval.approve()
    wait_answer(st)
  end)

  it("a request whose options lack always does not offer it", function()
    local p = vim.deepcopy(echo)
    p.options = { "approve", "reject" }
    local st = request(p)
    H.not_contains(H.win_lines(approval.current.ui.win), "always allow", "key line")
    H.stub(require("agentls"), "echo_line", function() end)
    H.feed(H.ALWAYS)
    H.eq(nil, st.done, "always is refused")
    H.feed(H.APPROVE)
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
  end)

  it("while the person types (insert mode) the review waits until they leave it", function()
    local msgs = H.echoes()
    H.stub(api, "nvim_get_mode", function()
      return { mode = "i", blocking = false }
    end)
    local st = request(echo)
    H.eq(1, approval.pending_count(), "pending")
    H.eq(nil, approval.current, "not shown while typing")
    H.contains(msgs, "the review opens when you leave insert mode", "told")
    H.feed("y") -- typed into the text, not an answer
    H.eq(nil, st.done, "not answered")
    api.nvim_exec_autocmds("ModeChanged", { pattern = "i:n", modeline = false })
    H.wait(function()
      return approval.current ~= nil and approval.current.ui ~= nil
    end, "the review after leaving insert mode")
    H.eq(nil, st.done, "the typed y did not answer")
    H.feed(H.APPROVE)
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
  end)

  it("text with newlines from the server stays one header line per field", function()
    local p = vim.deepcopy(shell)
    p.reason = "first line\nsecond line"
    p.warning = "careful\r\nreally"
    local st = request(p)
    local lines = H.win_lines(approval.current.ui.win)
    H.contains(lines, "Reason:  first line ⏎ second line", "reason")
    H.contains(lines, "Warning: careful ⏎ really", "warning")
    approval.approve()
    wait_answer(st)
  end)

  it("a preview without texts is shown as its unified diff", function()
    local p = multi()
    for _, f in ipairs(p.preview.files) do
      f.oldText, f.newText = nil, nil
    end
    local st = request(p)
    H.eq("float", approval.current.ui.kind, "float")
    H.contains(H.win_lines(approval.current.ui.win), "+new a", "the diff")
    approval.approve()
    wait_answer(st)
  end)

  it("results with multi-line messages are shown line by line", function()
    local lines = require("agentls").format_result({
      tool = "x", status = "error", error = { code = "EXECUTION_ERROR", message = "a\nb" }, content = "c\nd",
    })
    H.eq({ "x · error", "error EXECUTION_ERROR: a", "b" }, vim.list_slice(lines, 1, 3), "lines")
    for _, l in ipairs(lines) do
      H.truthy(not l:find("\n"), "no newline in " .. l)
    end
  end)

  it("keys can be remapped", function()
    require("agentls").setup({ cmd = { H.bin }, autostart = false, approval = { guard_ms = 0, focus = true, keys = { approve = "<CR>", reject = "x" } } })
    local st = request(echo)
    H.contains(H.win_lines(approval.current.ui.win), "<CR> approve · x reject · \\A always allow `echo x …`", "key line")
    H.feed("<CR>")
    H.eq({ decision = "approve" }, wait_answer(st), "answer")
  end)
end)

-- The deadline of approval/request (docs/protocol.md, "Approval"): expiresAt
-- when the clocks agree with timeoutMs, timeoutMs from arrival when not; the
-- review counts down and closes by itself, saying it expired.
describe("approval deadline", function()
  before_each(function()
    require("agentls").setup({ cmd = { H.bin }, autostart = false, approval = { guard_ms = 0, focus = true } })
  end)
  after_each(H.reset)

  local deadline = require("agentls.deadline")

  --- An RFC 3339 UTC time ms from now on the local clock, with milliseconds.
  local function utc_in(ms)
    local t = deadline.wall_ms() + ms
    return os.date("!%Y-%m-%dT%H:%M:%S", math.floor(t / 1000)) .. string.format(".%03dZ", t % 1000)
  end

  it("parses RFC 3339 with fractions and zones", function()
    local cases = {
      { "1970-01-01T00:00:00Z", 0 },
      { "2026-11-23T17:05:00Z", 1795453500000 },
      { "2026-11-23T17:05:00.250Z", 1795453500250 },
      { "2026-11-23T18:05:00+01:00", 1795453500000 },
      { "2024-02-29T23:59:59.999-00:30", 1709252999999 },
      { "garbage", nil },
    }
    for _, c in ipairs(cases) do
      H.eq(c[2], deadline.epoch_ms(c[1]), c[1])
    end
  end)

  it("reads expiresAt when the clocks agree, timeoutMs when they do not", function()
    local cases = {
      { "clocks agree", { expiresAt = utc_in(300000), timeoutMs = 299500 }, "^[45]:%d%d left" },
      { "local clock an hour behind", { expiresAt = utc_in(3600000 + 120000), timeoutMs = 120000 }, "^[12]:%d%d left" },
      { "local clock an hour ahead", { expiresAt = utc_in(-3600000 + 120000), timeoutMs = 120000 }, "^[12]:%d%d left" },
      { "timeoutMs alone", { timeoutMs = 90000 }, "^1:[23]%d left" },
      { "older fields only", { timeoutSeconds = 60 }, "^[01]:%d%d left" },
    }
    for _, c in ipairs(cases) do
      local e = approval.new_entry(vim.tbl_extend("force", { callId = "tc_" .. c[1], tool = "shell_exec" }, c[2]), nil, function() end)
      local left = deadline.time_left(e)
      H.truthy(left and left:match(c[3]) and left:match("%(rejected by itself at %d%d:%d%d:%d%d%)$"), c[1] .. ": " .. tostring(left))
    end
    H.eq(nil, deadline.time_left(approval.new_entry({ tool = "x" }, nil, function() end)), "no deadline")
  end)

  it("counts down in the header and closes at the deadline, saying it expired", function()
    local msgs = H.echoes()
    local st = request(vim.tbl_extend("force", echo, { expiresAt = utc_in(2500), timeoutMs = 2500 }))
    local e = approval.current
    local function expires()
      for _, l in ipairs(H.win_lines(e.ui.win)) do
        local m, s = l:match("^Expires: (%d+):(%d%d) left")
        if m then
          return tonumber(m) * 60 + tonumber(s)
        end
      end
    end
    local first = expires()
    H.truthy(first and first >= 1 and first <= 3, "time left on screen: " .. tostring(first))
    H.wait(function()
      return e.ui == nil or (expires() or first) < first
    end, "the header counts down", 2500)
    H.wait(function()
      return e.done
    end, "the deadline", 5000)
    H.eq(nil, e.ui, "the review closed")
    H.eq(nil, st.done, "no answer: the server rejects the call by itself")
    H.eq(0, approval.pending_count(), "nothing waits")
    H.contains(msgs, "the review of shell_exec by the agent expired", "said so")
  end)

  it("the server's rejection at the deadline, before the local timer, still says it expired", function()
    for _, c in ipairs({ { "tc_due", 1000, true }, { "tc_early", 60000, false } }) do
      local msgs = H.echoes()
      request(vim.tbl_extend("force", echo, { callId = c[1], expiresAt = utc_in(c[2]), timeoutMs = c[2] }))
      local e = approval.current
      approval.expire(c[1], "rejected") -- the call's result event, before the local timer
      H.truthy(e.done, c[1] .. ": settled")
      H.eq(0, approval.pending_count(), c[1] .. ": nothing waits")
      local said = false
      for _, m in ipairs(msgs) do
        said = said or m:find("the review of shell_exec by the agent expired", 1, true) ~= nil
      end
      H.eq(c[3], said, c[1] .. ": said it expired")
    end
  end)

  it("a real server's request shows its time left and closes when it expires", function()
    H.project({ ["a.txt"] = "a\n" }, "a.txt", { init_options = { config = { approval = { timeoutSeconds = 2 } } } })
    local _, wait = H.call_async("shell_exec", { command = "echo x" })
    local e = H.wait_approval(1)
    H.truthy(type(e.params.expiresAt) == "string" and type(e.params.timeoutMs) == "number", "expiresAt and timeoutMs sent")
    H.truthy(table.concat(H.win_lines(e.ui.win), "\n"):match("Expires: 0:0[0-2] left %(rejected by itself at "), "time left on screen")
    local res = wait(10000)
    H.eq("rejected", res.status, "rejected by itself")
    H.wait(function()
      return e.done and e.ui == nil
    end, "the review closed")
    H.eq(0, approval.pending_count(), "nothing waits")
  end)
end)
