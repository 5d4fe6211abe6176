-- An MCP client attached to this Neovim's agentls session: the plugin starts
-- the real agentls on a workspace (it publishes its session in
-- $XDG_RUNTIME_DIR, which run.sh gives to Neovim and so to the client), and
-- the official TypeScript SDK's MCP client ($AGENTLS_MCP_CLIENT,
-- mcp/test/client.mjs, run by node) runs `agentls mcp --root WS`, which attaches to that session: its reads see
-- the unsaved buffer, its edits are reviewed here and land in the buffer, and
-- a rejection's message is its tool result.
local H = require("helpers")
local approval = require("agentls.approval")

local client_bin = os.getenv("AGENTLS_MCP_CLIENT")
local AGENT = "Neovim Test Agent"
local WAIT = 60000 -- the client's start on a busy machine

--- Starts the MCP client with calls; the table returned gets .results (one
--- decoded result a line, as they come), .code when it exits, .stderr.
local function mcp_client(ws, calls)
  local st = { results = {}, out = "", stderr = "" }
  local cmd = { "node", client_bin, "--name", "nvim-test-agent", "--title", AGENT, "--calls", vim.json.encode(calls),
    "--", H.bin, "mcp", "--root", ws }
  local proc = vim.system(cmd, {
    stdout = function(_, data)
      if data then
        st.out = st.out .. data
      end
    end,
    stderr = function(_, data)
      if data then
        st.stderr = st.stderr .. data
      end
    end,
  }, function(done)
    st.code = done.code
  end)
  H.after(function()
    if not st.code then
      proc:kill(9)
    end
  end)
  return st
end

--- Waits for the n-th result of st.
local function wait_result(st, n)
  H.wait(function()
    local lines = vim.split(st.out, "\n", { plain = true })
    for i = #st.results + 1, #lines - 1 do
      st.results[i] = vim.json.decode(lines[i])
    end
    return st.results[n] ~= nil or st.code ~= nil and #lines - 1 < n
  end, "result " .. n .. " of the MCP client", WAIT)
  return H.truthy(st.results[n], string.format("result %d (client exit %s, stderr: %s)", n, tostring(st.code), st.stderr))
end

describe("attached MCP client", function()
  after_each(H.reset)

  it("reads the unsaved buffer; its edits are reviewed here: approved lands in the buffer, a rejection's message is its result", function()
    H.truthy(client_bin, "AGENTLS_MCP_CLIENT (run.sh sets it)")
    local ws, buf = H.project({ ["a.txt"] = "one\ntwo\nthree\n" }, "a.txt")
    -- A change the person has not saved.
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "unsaved one" })
    -- The plugin's own call sends the pending change first: the session has it.
    local own = H.call("read_file", { path = "a.txt" })
    H.contains(vim.json.encode(own), "unsaved one", "the session has the buffer")
    H.eq("one\ntwo\nthree\n", H.read(ws .. "/a.txt"), "disk before")

    local st = mcp_client(ws, {
      { name = "read_file", arguments = { path = "a.txt" } },
      { name = "edit_file", arguments = { path = "a.txt", old_string = "two", new_string = "deux" } },
      { name = "edit_file", arguments = { path = "a.txt", old_string = "three", new_string = "trois" } },
    })

    -- The read is the buffer's text, not the disk's.
    local read = wait_result(st, 1)
    H.eq(false, read.isError, "read_file: " .. read.text)
    H.contains(read.text, "unsaved one", "read_file")
    H.not_contains(read.text, "1\tone", "read_file")

    -- The first edit is reviewed here, named after the client; approved, it lands in the buffer.
    local e = H.wait_approval()
    H.eq("edit_file", e.params.tool, "tool")
    H.eq(AGENT, e.params.agent, "agent")
    H.contains(H.win_lines(e.ui.header_win), "Agent:   " .. AGENT, "review header")
    H.feed(H.APPROVE)
    local edit = wait_result(st, 2)
    H.eq(false, edit.isError, "edit_file: " .. edit.text)
    H.eq("unsaved one\ndeux\nthree\n", H.buf_text(buf), "buffer after the approved edit")
    -- The buffer had unsaved changes: the edit joins them there, the disk waits for the person.
    H.eq("one\ntwo\nthree\n", H.read(ws .. "/a.txt"), "disk after the approved edit")

    -- The second is rejected with a message: the client's result carries it.
    e = H.wait_approval()
    H.eq(AGENT, e.params.agent, "agent")
    H.contains(vim.inspect(e.params.arguments), "trois", "the second edit")
    H.confirm("keep the numbers in English")
    H.feed(H.REJECT)
    local rejected = wait_result(st, 3)
    H.eq(true, rejected.isError, "rejected edit")
    H.contains(rejected.text, "REJECTED: ", "rejected edit")
    H.contains(rejected.text, "keep the numbers in English", "the message reaches the client")
    H.eq("unsaved one\ndeux\nthree\n", H.buf_text(buf), "buffer after the rejection")

    H.wait(function()
      return st.code ~= nil
    end, "the MCP client to end", WAIT)
    H.eq(0, st.code, "client exit (stderr: " .. st.stderr .. ")")
    local log = table.concat(require("agentls.log").lines(), "\n")
    H.contains(log, "edit_file: approved by you", "log: decision")
    H.contains(log, "edit_file: rejected by you — keep the numbers in English", "log: rejection")
    H.contains(log, "edit_file call by " .. AGENT, "log: the call names the agent")
  end)
end)
