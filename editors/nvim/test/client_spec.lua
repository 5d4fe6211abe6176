-- Starting agentls, its capabilities, tool/list, tool/call, unsaved buffers.
local H = require("helpers")
local api = vim.api

describe("client", function()
  after_each(H.reset)

  it("starts on a file buffer of the workspace and declares the agentls capabilities", function()
    local ws, buf, client = H.project({ ["main.go"] = "package main\n", ["sub/b.txt"] = "b\n" }, "main.go")
    H.eq("agentls", require("agentls").initialize_info(client).name, "serverInfo.name")
    local exp = client.server_capabilities.experimental.agentls
    H.eq(1, exp.protocolVersion, "protocolVersion")
    H.truthy(exp.tools > 5, "tools count")
    H.eq(ws, client.workspace_folders[1].name, "root by .git marker")
    local caps = client.config.capabilities
    H.eq({ approvalRequest = true, saveAfterApply = true, nativePreview = false }, caps.experimental.agentls, "experimental.agentls")
    H.eq(true, caps.workspace.applyEdit, "applyEdit")
    H.eq(true, caps.workspace.workspaceEdit.documentChanges, "documentChanges")
    -- A second file of the workspace shares the client.
    local buf2, client2 = H.open(ws .. "/sub/b.txt")
    H.eq(client.id, client2.id, "one client per workspace")
    H.truthy(buf ~= buf2, "two buffers")
  end)

  it("coexists with another language server on the same buffer", function()
    local ws = H.workspace({ ["a.lua"] = "return 1\n" })
    H.setup()
    -- A second, in-process server attached to the same buffer.
    local other_inits = 0
    local function fake(dispatchers)
      local closing = false
      return {
        request = function(method, _, callback)
          if method == "initialize" then
            other_inits = other_inits + 1
            callback(nil, { capabilities = {} })
          elseif method == "shutdown" then
            callback(nil, vim.NIL)
          end
          return true, 1
        end,
        notify = function(method)
          if method == "exit" then
            dispatchers.on_exit(0, 15)
          end
          return true
        end,
        is_closing = function()
          return closing
        end,
        terminate = function()
          closing = true
        end,
      }
    end
    vim.cmd("edit " .. ws .. "/a.lua")
    local buf = api.nvim_get_current_buf()
    local other = vim.lsp.start({ name = "other", cmd = fake, root_dir = ws }, { bufnr = buf })
    H.truthy(other, "the other client")
    local client = H.client(buf)
    H.wait(function()
      return #vim.lsp.get_clients({ bufnr = buf }) == 2
    end, "both clients on the buffer")
    H.eq(1, other_inits, "the other server initialized")
    H.truthy(client.attached_buffers[buf], "agentls attached")
  end)

  it("says clearly when the binary is missing", function()
    local ws = H.workspace({ ["a.txt"] = "x\n" })
    local msgs = {}
    H.stub(vim, "notify", function(m, level)
      table.insert(msgs, { m = m, level = level })
    end)
    require("agentls").setup({ cmd = { "/nonexistent/agentls-missing" } })
    vim.cmd("edit " .. ws .. "/a.txt")
    H.wait(function()
      return #msgs > 0
    end, "a message")
    H.contains(msgs[1].m, "/nonexistent/agentls-missing", "message names the binary")
    H.contains(msgs[1].m, "not found", "message says why")
    H.eq(vim.log.levels.ERROR, msgs[1].level, "level")
    H.eq(0, #vim.lsp.get_clients({ name = "agentls" }), "no client")
    -- The API reports it too, without a second popup.
    local res, err = H.call("get_current_datetime", {})
    H.eq(nil, res, "no result")
    H.contains(err.message, "not found", "API error")
    H.eq(1, #msgs, "one notification")
  end)

  it("lists the tools (tool/list) in agentls and openai formats", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local tools, err, done
    require("agentls").list(function(t, e)
      tools, err, done = t, e, true
    end)
    H.wait(function()
      return done
    end, "tool/list")
    H.eq(nil, err, "error")
    local by = {}
    for _, t in ipairs(tools) do
      by[t.name] = t
    end
    H.truthy(by.read_file, "read_file listed")
    H.truthy(by.get_current_datetime, "get_current_datetime listed")
    H.eq("auto", by.read_file.annotations.approval, "read_file approval")
    H.truthy(by.read_file.inputSchema.properties.path, "read_file schema")
    done = false
    require("agentls").list(function(t, e)
      tools, err, done = t, e, true
    end, { format = "openai" })
    H.wait(function()
      return done
    end, "tool/list openai")
    H.eq("function", tools[1].type, "openai format")
  end)

  it("calls a tool without any buffer (starts the server for the current directory)", function()
    local ws = H.workspace({ ["a.txt"] = "x\n" })
    H.setup()
    vim.cmd("cd " .. ws)
    local res, err = H.call("get_current_datetime", {})
    vim.cmd("cd -")
    H.eq(nil, err, "error")
    H.eq("success", res.status, "status")
    H.eq("get_current_datetime", res.tool, "tool")
    H.truthy(res.content:match("%d%d%d%d%-%d%d%-%d%d"), "a date in " .. res.content)
  end)

  it("read_file returns the unsaved text of a buffer", function()
    local ws, buf = H.project({ ["notes.txt"] = "on disk\n" }, "notes.txt")
    api.nvim_buf_set_lines(buf, 0, -1, false, { "typed but not saved", "é 中 😀 second line" })
    H.eq(true, vim.bo[buf].modified, "buffer modified")
    local res = H.call("read_file", { path = "notes.txt" })
    H.eq("success", res.status, "status")
    H.contains(res.content, "typed but not saved", "content")
    H.contains(res.content, "é 中 😀 second line", "non-ASCII content")
    H.not_contains(res.content, "on disk", "content")
    H.eq(true, res.structured.from_buffer, "from_buffer")
    H.eq("on disk\n", H.read(ws .. "/notes.txt"), "disk untouched")
    -- Typed right before the call (didChange still debounced) is seen too.
    api.nvim_buf_set_lines(buf, 0, 1, false, { "changed again" })
    res = H.call("read_file", { path = "notes.txt" })
    H.contains(res.content, "changed again", "fresh content")
  end)

  it("shows a tool's schema errors clearly (:AgentlsCall)", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local msgs = {}
    H.stub(vim, "notify", function(m, level)
      table.insert(msgs, { m = m, level = level })
    end)
    vim.cmd([[AgentlsCall read_file {"path": 3}]])
    H.wait(function()
      return vim.fn.bufnr("agentls://result") ~= -1 and #msgs > 0
    end, "the result window")
    local lines = api.nvim_buf_get_lines(vim.fn.bufnr("agentls://result"), 0, -1, false)
    H.contains(lines, "read_file · error", "header")
    H.contains(lines, "error INVALID_PARAMS", "code")
    H.contains(lines, "/path: got number, want string", "the pointer and the reason")
    H.contains(msgs[1].m, "/path: got number, want string", "notified")
    H.eq(vim.log.levels.ERROR, msgs[1].level, "level")
    -- Invalid JSON never reaches the server.
    msgs = {}
    vim.cmd([[AgentlsCall read_file {"path": ]])
    H.contains(msgs[1].m, "not valid JSON", "JSON error")
    msgs = {}
    vim.cmd([[AgentlsCall read_file [1,2] ]])
    H.contains(msgs[1].m, "must be a JSON object", "array arguments")
  end)

  it(":AgentlsCall shows a successful result; completion lists tools", function()
    H.project({ ["a.txt"] = "alpha\nbeta\n" }, "a.txt")
    vim.cmd([[AgentlsCall read_file {"path": "a.txt"}]])
    H.wait(function()
      local b = vim.fn.bufnr("agentls://result")
      return b ~= -1 and table.concat(api.nvim_buf_get_lines(b, 0, -1, false), "\n"):find("beta", 1, true) ~= nil
    end, "the result")
    local lines = api.nvim_buf_get_lines(vim.fn.bufnr("agentls://result"), 0, -1, false)
    H.contains(lines[1], "read_file · success", "header")
    local names = vim.fn.getcompletion("AgentlsCall read", "cmdline")
    H.contains(names, "read_file", "completion")
  end)

  it(":AgentlsTools picks a tool and runs it with the typed arguments", function()
    local ws = H.project({ ["a.txt"] = "x\n" }, "a.txt")
    local picker = H.select(function(t)
      return t.name == "get_current_directory"
    end)
    local asked = H.confirm("{}")
    vim.cmd("AgentlsTools")
    H.wait(function()
      local b = vim.fn.bufnr("agentls://result")
      return b ~= -1 and api.nvim_buf_get_lines(b, 0, 1, false)[1]:find("get_current_directory", 1, true)
    end, "the result")
    H.contains(picker.shown, "read_file", "picker items")
    H.eq("{}", asked.default, "skeleton of a tool without required arguments")
    local lines = api.nvim_buf_get_lines(vim.fn.bufnr("agentls://result"), 0, -1, false)
    H.contains(lines, ws, "the directory")
  end)

  it("has a help file whose tags resolve", function()
    local doc = vim.fn.tempname()
    vim.fn.mkdir(doc .. "/doc", "p")
    local src = vim.api.nvim_get_runtime_file("doc/agentls.txt", false)[1]
    H.truthy(src, "doc/agentls.txt on the runtimepath")
    vim.fn.writefile(vim.fn.readfile(src), doc .. "/doc/agentls.txt")
    vim.cmd("helptags " .. doc .. "/doc")
    vim.opt.runtimepath:prepend(doc)
    for _, tag in ipairs({ "agentls.txt", "agentls-review", ":AgentlsCall", "agentls.call()", "agentls.statusline()" }) do
      vim.cmd("help " .. tag)
      H.eq("help", vim.bo.buftype, "help for " .. tag)
      vim.cmd("helpclose")
    end
    vim.opt.runtimepath:remove(doc)
    vim.fn.delete(doc, "rf")
  end)

  it("checkhealth agentls reports the binary and the client", function()
    H.project({ ["a.txt"] = "x\n" }, "a.txt")
    vim.cmd("silent checkhealth agentls")
    local text = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    H.contains(text, "agentls version", "version")
    H.contains(text, "protocol 1", "client")
    H.not_contains(text, "ERROR", "errors")
  end)
end)
