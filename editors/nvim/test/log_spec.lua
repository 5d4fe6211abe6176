-- tool/event and $/progress in the log; the applyEdit handler's refusals.
local H = require("helpers")
local api = vim.api
local approval = require("agentls.approval")

describe("log and progress", function()
  after_each(H.reset)

  it("streams a command's output ($/progress) and its events into :AgentlsLog", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local progress = {}
    local st, wait = H.call_async("shell_exec", { command = "echo hello-from-shell; echo second-line" }, {
      reason = "say hello",
      on_progress = function(v)
        table.insert(progress, v)
      end,
    })
    local e = H.wait_approval()
    H.eq("float", e.ui.kind, "a command is reviewed in a float")
    H.contains(H.win_lines(e.ui.win), "Command: echo hello-from-shell; echo second-line", "command")
    H.contains(H.win_lines(e.ui.win), "Risk:    execute", "risk")
    H.feed(H.APPROVE)
    local res = wait()
    H.eq("success", res.status, "status: " .. vim.inspect(res))
    H.contains(res.structured.stdout, "hello-from-shell", "stdout")
    local kinds = {}
    for _, v in ipairs(progress) do
      kinds[v.kind] = true
    end
    H.truthy(kinds.begin and kinds["end"], "begin and end progress: " .. vim.inspect(progress))
    vim.cmd("AgentlsLog")
    H.eq("agentls://log", api.nvim_buf_get_name(0), "the log buffer")
    local text = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    -- The call event (needing approval), the awaitingApproval event, the
    -- decision, the streamed output and the result event.
    H.contains_each(text, { "shell_exec call", "(needs approval)", "shell_exec awaiting approval",
      "shell_exec: approved by you", "hello-from-shell", "shell_exec → success" }, "the log")
    H.truthy(st.done, "done")
  end)

  it("e approves with arguments changed by the person (modifiedArguments)", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local _, wait = H.call_async("shell_exec", { command = "echo from-the-agent" })
    H.wait_approval()
    local default
    H.stub(vim.ui, "input", function(opts, cb)
      default = opts.default
      cb(opts.default:gsub("from%-the%-agent", "changed-by-you"))
    end)
    H.feed(H.EDIT)
    -- The server judges the edited call and asks again, showing it.
    H.wait(function()
      local c = approval.current
      return c and c.ui and c.params.arguments.command == "echo changed-by-you"
    end, "the edited call asked again")
    H.feed(H.APPROVE)
    local res = wait()
    H.contains(default, '"command":"echo from-the-agent"', "prefilled with the arguments")
    H.eq("success", res.status, "status: " .. vim.inspect(res))
    H.contains(res.structured.stdout, "changed-by-you", "the changed command ran")
    H.not_contains(res.structured.stdout, "from-the-agent", "not the original")
  end)

  it("a rejected command does not run", function()
    local ws = H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local _, wait = H.call_async("shell_exec", { command = "touch ran.txt" })
    local e = H.wait_approval()
    approval.reject(e, "no")
    local res = wait()
    H.eq("rejected", res.status, "status")
    H.eq(nil, vim.uv.fs_stat(ws .. "/ran.txt"), "the command did not run")
  end)

  it("cancel() cancels a waiting call and its approval goes away", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local result, err, done
    local handle = require("agentls").call("shell_exec", { command = "touch made-by-test.txt" }, function(r, e)
      result, err, done = r, e, true
    end)
    H.wait_approval()
    handle.cancel()
    H.truthy(done, "the callback ran")
    H.eq(-32800, err.code, "RequestCancelled")
    H.wait(function()
      return approval.pending_count() == 0
    end, "the approval to be withdrawn")
  end)

  it("refuses an edit made for an older version of the buffer", function()
    local _, buf, client = H.project({ ["a.txt"] = "one\n" }, "a.txt")
    local v0 = require("agentls.versions").version(buf)
    api.nvim_buf_set_lines(buf, 0, -1, false, { "typed" })
    H.truthy(require("agentls.versions").version(buf) > v0, "version moved")
    local reply = require("agentls.edit").handler(nil, {
      label = "stale",
      edit = {
        documentChanges = {
          {
            textDocument = { uri = vim.uri_from_bufnr(buf), version = v0 },
            edits = { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 3 } }, newText = "ONE" } },
          },
        },
      },
    }, { client_id = client.id })
    H.eq(false, reply.applied, "applied")
    H.contains(reply.failureReason, "changed in the editor", "reason")
    H.eq("typed\n", H.buf_text(buf), "buffer untouched")
  end)

  it("the statusline function counts the calls waiting", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local events = 0
    api.nvim_create_autocmd("User", {
      pattern = "AgentlsApproval",
      callback = function()
        events = events + 1
      end,
    })
    H.eq("", require("agentls").statusline(), "nothing waiting")
    local _, w1 = H.call_async("shell_exec", { command = "touch made-by-test.txt" })
    local _, w2 = H.call_async("shell_exec", { command = "touch made-by-test.txt" })
    H.wait(function()
      return approval.pending_count() == 2
    end, "two waiting")
    H.eq("agentls: 2 awaiting approval", require("agentls").statusline(), "two")
    H.eq(2, require("agentls").pending_count(), "pending_count")
    H.truthy(events >= 2, "User AgentlsApproval autocommands")
    approval.approve()
    H.wait(function()
      return approval.pending_count() == 1
    end, "one waiting")
    H.eq("agentls: 1 awaiting approval", require("agentls").statusline(), "one")
    H.wait_approval()
    approval.approve()
    w1()
    w2()
    H.eq("", require("agentls").statusline(), "none")
  end)
end)
