-- Reviews nobody answers by accident (docs/protocol.md, "Approval"): typed input while a review
-- arrives, in insert and in normal mode, never answers it; a list of the
-- waiting reviews; remembered answers listed and revoked on the real server.
local H = require("helpers")
local api = vim.api
local approval = require("agentls.approval")

local request = H.request

local function shell(id, command, risk)
  return {
    callId = id,
    tool = "shell_exec",
    arguments = { command = command },
    risk = risk or "execute",
    agent = "claude",
    cwd = "/work/project",
    timeoutSeconds = 300,
    options = risk == "dangerous" and { "approve", "reject" } or { "approve", "reject", "always" },
    alwaysLabel = risk ~= "dangerous" and ("always allow `" .. command:match("^%S+") .. " …`") or nil,
  }
end

--- A buffer the person writes prose in, current in the first tab.
local function notes()
  vim.cmd("enew")
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].bufhidden = "hide"
  return buf
end

--- Types keys as in normal mode, through mappings, as a person would.
local function type_keys(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "mx", false)
end

describe("reviews typed at by accident", function()
  before_each(function()
    require("agentls").setup({ cmd = { H.bin }, autostart = false, approval = { guard_ms = 400 } })
  end)
  after_each(H.reset)

  it("a review that arrives while the person types prose (insert mode) is not answered by it", function()
    local buf = notes()
    local st
    -- While insert mode runs (feedkeys with "x!" stays in it until <Esc>),
    -- the review arrives, then the person keeps typing words made of the
    -- review's old keys, then leaves insert mode and goes on in normal mode.
    vim.defer_fn(function()
      st = request(shell("tc_typed1", "rm -r somedir", "dangerous"))
      api.nvim_input(" yes always no<Esc>")
    end, 50)
    api.nvim_feedkeys("imaybe", "ntx!", false)
    H.wait(function()
      return api.nvim_get_mode().mode == "n" and approval.current ~= nil and approval.current.ui ~= nil
    end, "the review opened after insert mode")
    H.eq("maybe yes always no", api.nvim_buf_get_lines(buf, 0, -1, false)[1], "the prose landed in the buffer")
    H.eq(buf, api.nvim_get_current_buf(), "the cursor stayed in the person's buffer")
    H.eq(nil, st.done, "not answered")
    -- More typing in normal mode: motions, a search and n, yank, append.
    type_keys("0eeb/always<CR>nNyyAagain<Esc>")
    H.eq(nil, st.done, "not answered by motions, search or yank")
    H.eq(1, approval.pending_count(), "still waiting")
    H.eq("maybe yes always noagain", api.nvim_buf_get_lines(buf, 0, -1, false)[1], "a appended to the person's line")
    -- Only the deliberate way answers: go there, then the keys of the review.
    H.select(function()
      return true
    end)
    vim.cmd("AgentlsReviews")
    H.truthy(vim.b.agentls_approval ~= nil, "the cursor is in the review")
    vim.wait(450) -- past the guard of this opening
    H.confirm("yes")
    type_keys(H.APPROVE)
    H.wait_answer(st)
    H.eq("approve", st.answer.decision, "approved on purpose")
  end)

  it("normal-mode typing while a review arrives: search then n, e, y, a answer nothing", function()
    local buf = notes()
    api.nvim_buf_set_lines(buf, 0, -1, false, { "one two three", "yes no always maybe" })
    local st = request(shell("tc_typed2", "echo x"))
    H.truthy(approval.current and approval.current.ui, "the review is open")
    H.eq(buf, api.nvim_get_current_buf(), "in the background: the cursor stayed")
    type_keys("gg/no<CR>nneeyyawords <Esc>")
    H.eq(nil, st.done, "not answered")
    H.eq(buf, api.nvim_get_current_buf(), "still in the buffer")
    -- Even in the review itself (focus = true, or the person went there),
    -- the old single keys are motions, not answers.
    approval.show(approval.current, { focus = true })
    vim.wait(450)
    type_keys("/Tool<CR>nneeyy")
    H.eq(nil, st.done, "n, e and y are motions in the review")
    H.confirm(nil)
    type_keys(H.ALWAYS) -- asks to confirm; <Esc> keeps waiting
    H.eq(nil, st.done, "always needs its confirmation")
    H.confirm("always")
    type_keys(H.ALWAYS)
    H.wait_answer(st)
    H.eq("always", st.answer.decision, "always, confirmed")
  end)

  it("in a diff tab that took the cursor (focus = true), n after a search, e, y, yy and a answer nothing", function()
    require("agentls").setup({ cmd = { H.bin }, autostart = false, approval = { guard_ms = 0, focus = true } })
    local st = request({
      callId = "tc_tab1", tool = "edit_file", arguments = { path = "a.go" }, risk = "write", agent = "claude",
      options = { "approve", "reject", "always" }, alwaysLabel = "always allow edit_file",
      preview = { unifiedDiff = "", files = { { path = "a.go", operation = "modify", oldText = "old a\nsame\n", newText = "new a\nsame\n" } } },
    })
    local e = approval.current
    H.eq("tab", e.ui.kind, "a diff tab")
    H.eq(e.ui.new_win, api.nvim_get_current_win(), "the cursor is in the proposal")
    type_keys("/same<CR>nNeebyyya")
    type_keys("<Esc>")
    H.eq(nil, st.done, "motions, search repeat, yank and append answer nothing")
    H.eq({ "new a", "same" }, H.win_lines(e.ui.new_win), "the proposal is unchanged")
    type_keys(H.APPROVE)
    H.wait_answer(st)
    H.eq("approve", st.answer.decision, "the deliberate key")
  end)

  it("every opening has the guard, the second one too", function()
    local st = request(shell("tc_typed3", "echo x"))
    local msgs = H.echoes()
    approval.open_pending()
    type_keys(H.APPROVE)
    H.eq(nil, st.done, "the first opening's guard")
    approval.hide(approval.current, { quiet = true })
    vim.wait(450)
    approval.open_pending() -- again
    type_keys(H.APPROVE)
    H.eq(nil, st.done, "the second opening's guard")
    H.contains(msgs, "press the key again", "told")
    vim.wait(450)
    type_keys(H.APPROVE)
    H.wait_answer(st)
  end)

  it(":AgentlsReviews lists every waiting review with agent, tool, risk and time left", function()
    local a = request(shell("tc_list1", "echo x"))
    local b = request(shell("tc_list2", "rm -r build", "dangerous"))
    local picker = H.select(function(_, i)
      return i == 2
    end)
    vim.cmd("AgentlsReviews")
    local shown = picker.shown
    H.eq(2, #shown, "two listed")
    H.truthy(shown[1]:match("^claude: shell_exec `echo x` %[execute%] — [45]:%d%d left$"), shown[1])
    H.truthy(shown[2]:match("^claude: shell_exec `rm %-r build` %[dangerous%]"), shown[2])
    H.eq("tc_list2", approval.current.params.callId, "the chosen one is on screen")
    H.eq(approval.current.id, vim.b.agentls_approval, "with the cursor in it")
    approval.reject(approval.current, "")
    approval.reject(approval.queue[1], "")
    H.wait(function()
      return a.done and b.done
    end, "both answered")
  end)

  it("a rejection's result is one line without a Press ENTER prompt", function()
    local echoed = {}
    H.stub(vim, "notify", function(m)
      table.insert(echoed, "notify:" .. m)
    end)
    H.stub(api, "nvim_echo", function(chunks)
      table.insert(echoed, chunks[1][1])
    end)
    require("agentls").show_result({ tool = "shell_exec", status = "rejected", message = "not now\nreally",
      content = "rejected by the user: not now\nreally", callId = "tc_x" })
    H.eq(1, #echoed, "one message")
    H.truthy(not echoed[1]:find("\n") and vim.fn.strdisplaywidth(echoed[1]) < vim.o.columns, "one line that fits: " .. echoed[1])
    H.contains(echoed[1], "shell_exec · rejected", "what")
  end)
end)

describe("remembered answers (:AgentlsRules, approval/rules)", function()
  after_each(H.reset)

  it("lists the always answers and revokes one; the server asks again", function()
    local ws = H.project({ ["a.txt"] = "a\n" }, "a.txt", { approval = { focus = false } })
    local _, wait = H.call_async("shell_exec", { command = "echo x" })
    H.wait(function()
      return approval.pending_count() == 1 and approval.current and approval.current.ui
    end, "the review")
    local e = approval.current
    H.eq("always allow `echo x …`", e.params.alwaysLabel, "label from the server")
    H.eq(ws, e.params.cwd, "cwd from the server")
    approval.always(e)
    H.eq("success", wait().status, "ran")
    local rules
    require("agentls").rules(function(r)
      rules = r
    end)
    H.wait(function()
      return rules ~= nil
    end, "approval/rules")
    H.eq(1, #rules, "one rule")
    H.eq("always allow `echo x …`", rules[1].label, "its label")
    -- :AgentlsRules: choose it, then Revoke.
    local listed
    H.stub(vim.ui, "select", function(items, opts, cb)
      if not listed then
        listed = vim.tbl_map(opts.format_item, items)
        cb(items[1])
      else
        cb(items[1]) -- "Revoke: ..."
      end
    end)
    local msgs = H.echoes()
    vim.cmd("AgentlsRules")
    H.wait(function()
      return #msgs > 0
    end, "the revocation")
    H.contains(listed[1], "always allow `echo x …`  [this session]", "listed")
    H.contains(msgs[1], "revoked: always allow `echo x …`", "told")
    local _, wait2 = H.call_async("shell_exec", { command = "echo x" })
    H.wait(function()
      return approval.pending_count() == 1
    end, "asked again after the revocation")
    approval.reject(approval.queue[1], "")
    H.eq("rejected", wait2().status, "rejected")
  end)
end)
