-- Other ways of running: over TCP, without save-after-apply, partial results,
-- stop and restart.
local H = require("helpers")
local api = vim.api
local approval = require("agentls.approval")

local function free_port()
  local tcp = vim.uv.new_tcp()
  tcp:bind("127.0.0.1", 0)
  local port = tcp:getsockname().port
  tcp:close()
  return port
end

describe("transports and options", function()
  after_each(H.reset)

  it("works over TCP (agentls serve --listen, cmd = vim.lsp.rpc.connect)", function()
    local ws = H.workspace({ ["a.txt"] = "over tcp\n" })
    local port = free_port()
    -- A listening server lets in only a client that presents its token.
    local token = "nvim-transport-test-token-0123456789"
    local token_file = vim.fn.tempname()
    vim.fn.writefile({ token }, token_file)
    vim.uv.fs_chmod(token_file, tonumber("600", 8))
    local job = vim.fn.jobstart({ H.bin, "serve", "--listen", "127.0.0.1:" .. port, "--token-file", token_file })
    H.truthy(job > 0, "server started")
    local ok = vim.wait(5000, function()
      local c = vim.uv.new_tcp()
      local connected
      c:connect("127.0.0.1", port, function(err)
        connected = err == nil
      end)
      vim.wait(200, function()
        return connected ~= nil
      end, 5)
      c:close()
      return connected == true
    end, 50)
    H.truthy(ok, "the server listens")
    H.setup({ cmd = vim.lsp.rpc.connect("127.0.0.1", port), init_options = { token = token } })
    local buf = H.open(ws .. "/a.txt")
    api.nvim_buf_set_lines(buf, 0, -1, false, { "unsaved over tcp" })
    local res = H.call("read_file", { path = "a.txt" })
    H.contains(res.content, "unsaved over tcp", "read_file over TCP")
    vim.fn.jobstop(job)
  end)

  it("save_after_apply = false leaves approved edits unsaved and says so", function()
    local ws, buf, client = H.project({ ["a.txt"] = "alpha\n" }, "a.txt", { save_after_apply = false })
    H.eq(false, client.config.capabilities.experimental.agentls.saveAfterApply, "capability")
    local _, wait = H.call_async("edit_file", { path = "a.txt", old_string = "alpha", new_string = "beta" })
    H.wait_approval()
    H.feed(H.APPROVE)
    local res = wait()
    H.eq("success", res.status, "status")
    H.eq("beta\n", H.buf_text(buf), "buffer")
    H.eq(true, vim.bo[buf].modified, "not saved")
    H.eq("alpha\n", H.read(ws .. "/a.txt"), "disk")
    H.eq({ "a.txt" }, res.structured.unsaved, "the result lists it")
  end)

  it("set_config sends settings.agentls to the running server", function()
    local ws = H.project({ ["a.txt"] = "alpha\n" }, "a.txt")
    require("agentls").set_config({ approval = { tools = { edit_file = "auto" } } })
    local asked = approval.received
    local res = H.call("edit_file", { path = "a.txt", old_string = "alpha", new_string = "beta" })
    H.eq("success", res.status, "status: " .. vim.inspect(res))
    H.eq(asked, approval.received, "not asked")
    H.eq("beta\n", H.read(ws .. "/a.txt"), "applied and saved")
  end)

  it("grep streams partial results to on_partial", function()
    local files = {}
    for i = 1, 30 do
      files[string.format("f%02d.txt", i)] = string.rep("needle line\n", 20)
    end
    local ws = H.workspace(files)
    H.setup()
    H.open(ws .. "/f01.txt")
    local batches, matches = 0, 0
    local res = H.call("grep", { pattern = "needle", max_results = 10000 }, {
      on_partial = function(batch)
        batches = batches + 1
        matches = matches + #((batch and batch.matches) or {})
      end,
    })
    H.eq("success", res.status, "status")
    -- LSP 3.17: the batches are the whole result; the final one repeats none
    -- (docs/protocol.md, "Methods": partialResultToken).
    H.eq(0, #res.structured.matches, "matches in the result")
    H.eq(600, res.structured.streamed, "streamed")
    H.truthy(batches >= 1 and matches == 600, string.format("partial batches (%d batches, %d matches)", batches, matches))
  end)

  it(":AgentlsStop stops the server, :AgentlsRestart brings it back on the same buffers", function()
    local _, buf, c1 = H.project({ ["a.txt"] = "x\n" }, "a.txt")
    vim.cmd("AgentlsRestart")
    H.wait(function()
      local c = vim.lsp.get_clients({ name = "agentls", bufnr = buf })[1]
      return c ~= nil and c.id ~= c1.id and c.initialized
    end, "a new client on the buffer")
    vim.cmd("AgentlsStop")
    H.wait(function()
      return #vim.lsp.get_clients({ name = "agentls" }) == 0
    end, "no client")
    H.eq(0, approval.pending_count(), "nothing pending")
  end)
end)
