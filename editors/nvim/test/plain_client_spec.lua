-- Neovim's built-in client with no plugin (a client with applyEdit only:
-- docs/protocol.md, "Approval"): `nvim --clean`, the real agentls started
-- with vim.lsp.start and the default capabilities of
-- vim.lsp.protocol.make_client_capabilities() (applyEdit and resource
-- operations, no documentChanges). run.sh runs this file alone, in its own
-- Neovim, without the agentls plugin (AGENTLS_TEST_PLAIN=1); the person's
-- answer to the server's question (window/showMessageRequest, shown with
-- vim.ui.select by the default handler) is the only thing stubbed.
local api = vim.api
-- The helpers of the other specs, loaded by path: this Neovim has no plugin
-- (and no test folder) on its path.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
local eq, truthy, fail, read, workspace = H.eq, H.truthy, H.fail, H.read, H.workspace

local function wait(cond, what, ms)
  H.wait(cond, what, ms or 15000)
end

-- The questions the person was asked in this test (H.select's record).
local asked

-- Starts the real server for the current buffer with the defaults: no
-- capabilities given, so vim.lsp.start sends make_client_capabilities().
local function start(root, init_options)
  local id = vim.lsp.start({ name = "agentls-plain", cmd = { H.bin, "serve" }, root_dir = root, init_options = init_options })
  truthy(id, "vim.lsp.start")
  local client
  wait(function()
    client = vim.lsp.get_client_by_id(id)
    return client and client.initialized
  end, "the client to initialize")
  return client
end

local function open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  return api.nvim_get_current_buf()
end

--- A workspace with files and a.txt open in it, the server started for it
--- (and, with approve, every question approved).
--- @return string ws, integer buf, table client
local function project(files, approve)
  local ws = workspace(files)
  if approve then
    -- The person approves every question the server asks (the default
    -- handler shows it with vim.ui.select).
    asked = H.select(function(it)
      return it.title == "Approve"
    end)
  end
  local buf = open(ws .. "/a.txt")
  return ws, buf, start(ws)
end

-- tool/call through client.request (which first flushes the buffer's
-- pending didChange), waited for.
local function call(client, buf, name, args, extra)
  local params = vim.tbl_extend("force", { name = name, arguments = args }, extra or {})
  local done, res, err
  client.request("tool/call", params, function(e, r)
    done, res, err = true, r, e
  end, buf)
  wait(function()
    return done
  end, "the result of " .. name, 20000)
  if err then
    fail(name .. ": " .. vim.inspect(err))
  end
  return res
end

local function lines(buf)
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

describe("plain Neovim client (no plugin, default capabilities)", function()
  after_each(function()
    H.undo()
    asked = nil
    H.stop_clients(3000)
    pcall(vim.cmd, "silent! %bwipeout!")
    H.remove_temps()
  end)

  it("sends no documentChanges capability (a client with applyEdit only)", function()
    local caps = vim.lsp.protocol.make_client_capabilities()
    eq(true, caps.workspace.applyEdit, "applyEdit")
    eq(nil, caps.workspace.workspaceEdit.documentChanges, "documentChanges")
  end)

  it("edits land in the unsaved buffer, the disk keeps the saved text, a second edit keeps the first", function()
    local ws, buf, client = project({ ["a.txt"] = "one\ntwo\nthree\n" }, true)
    -- An unsaved change the person made.
    api.nvim_buf_set_lines(buf, 0, 1, false, { "one (unsaved é中😀)" })
    local res = call(client, buf, "edit_file", { path = "a.txt", old_string = "two", new_string = "TWO 😀" })
    eq("success", res.status, "first edit: " .. vim.inspect(res))
    eq("editor", res.structured.applied_by, "applied_by")
    eq({ "a.txt" }, res.structured.unsaved, "unsaved")
    eq({ "one (unsaved é中😀)", "TWO 😀", "three" }, lines(buf), "buffer after the first edit")
    eq("one\ntwo\nthree\n", read(ws .. "/a.txt"), "disk after the first edit")
    res = call(client, buf, "edit_file", { path = "a.txt", old_string = "three", new_string = "THREE" })
    eq("success", res.status, "second edit: " .. vim.inspect(res))
    eq({ "one (unsaved é中😀)", "TWO 😀", "THREE" }, lines(buf), "buffer after the second edit")
    eq("one\ntwo\nthree\n", read(ws .. "/a.txt"), "disk after the second edit")
    truthy(vim.bo[buf].modified, "the buffer is still modified (unsaved)")
    truthy(#asked.prompts == 2, "the person was asked twice: " .. vim.inspect(asked.prompts))
  end)

  it("move_file of a modified buffer is a RenameFile: the buffer visits the new path with its unsaved text", function()
    -- Neovim declares the rename operation without documentChanges; the
    -- server sends a plan of moves as documentChanges all the same.
    local ws, buf, client = project({ ["a.txt"] = "saved\n" }, true)
    api.nvim_buf_set_lines(buf, 0, -1, false, { "saved", "unsaved é😀" })
    local res = call(client, buf, "move_file", { from = "a.txt", to = "sub/b.txt" })
    eq("success", res.status, "move: " .. vim.inspect(res))
    eq("editor", res.structured.applied_by, "applied_by")
    eq(ws .. "/sub/b.txt", vim.fs.normalize(api.nvim_buf_get_name(buf)), "the buffer visits the new path")
    eq({ "saved", "unsaved é😀" }, lines(buf), "the buffer keeps its text")
    eq(nil, read(ws .. "/a.txt"), "old path gone")
    -- Neovim's own rename (vim.lsp.util.rename) writes the buffer with
    -- :saveas!, so the new path has the buffer's text.
    eq("saved\nunsaved é😀\n", read(ws .. "/sub/b.txt"), "the new path")
  end)

  it("write_file of a new file creates it with its content, and no stray buffer", function()
    local ws, buf, client = project({ ["a.txt"] = "a\n" }, true)
    local res = call(client, buf, "write_file", { path = "new/made.txt", content = "made é\n" })
    eq("success", res.status, vim.inspect(res))
    eq("made é\n", read(ws .. "/new/made.txt"), "the new file on disk")
    eq(-1, vim.fn.bufnr(ws .. "/new/made.txt"), "no unsaved buffer holds the new file")
  end)

  it("grep partial results are not repeated in the final result", function()
    local files = { ["a.txt"] = "x\n" }
    for i = 1, 12 do
      files[string.format("d/f%02d.txt", i)] = "needle\nhay\nneedle\n"
    end
    local _, buf, client = project(files)
    local streamed = {}
    local group = api.nvim_create_augroup("plain-progress", { clear = true })
    H.after(function()
      api.nvim_del_augroup_by_id(group)
    end)
    api.nvim_create_autocmd("LspProgress", {
      group = group,
      callback = function(ev)
        local p = ev.data and ev.data.params
        if p and p.token == "grep-partial" and type(p.value) == "table" and p.value.matches then
          for _, m in ipairs(p.value.matches) do
            local k = m.path .. ":" .. m.line
            streamed[k] = (streamed[k] or 0) + 1
          end
        end
      end,
    })
    local res = call(client, buf, "grep", { pattern = "needle" }, { partialResultToken = "grep-partial" })
    eq("success", res.status, vim.inspect(res))
    wait(function()
      return vim.tbl_count(streamed) == 24
    end, "24 streamed matches, got " .. vim.inspect(streamed))
    for k, n in pairs(streamed) do
      eq(1, n, "times " .. k .. " was streamed")
    end
    eq({}, res.structured.matches, "matches in the final result")
    eq(24, res.structured.streamed, "streamed count in the final result")
    eq(false, res.structured.truncated, "truncated")
    -- Without a token the result has them all.
    res = call(client, buf, "grep", { pattern = "needle" })
    eq(24, #res.structured.matches, "matches without a token")
  end)

  it("paths of an added workspace folder round-trip", function()
    local ws = workspace({ ["a.txt"] = "first root marker\n" })
    local second = workspace({ ["pkg/two.txt"] = "second root marker\n" })
    local buf = open(ws .. "/a.txt")
    local client = start(ws)
    vim.lsp.buf.add_workspace_folder(second)
    local name = vim.fs.basename(second)
    local res
    wait(function()
      res = call(client, buf, "glob", { pattern = "**/*.txt", path = name })
      return res.status == "success"
    end, "glob in the added folder")
    eq({ name .. "/pkg/two.txt" }, res.structured.files, "glob result " .. vim.inspect(res))
    res = call(client, buf, "read_file", { path = res.structured.files[1] })
    eq("success", res.status, "read_file of the result path: " .. vim.inspect(res))
    truthy(res.content:find("second root marker", 1, true), "content of the second root's file")
    res = call(client, buf, "grep", { pattern = "root marker" })
    eq("success", res.status, vim.inspect(res))
    for _, m in ipairs(res.structured.matches) do
      local r = call(client, buf, "read_file", { path = m.path })
      eq("success", r.status, "read_file " .. m.path .. ": " .. vim.inspect(r))
    end
    -- The first root's files keep working as before.
    res = call(client, buf, "read_file", { path = "a.txt" })
    eq("success", res.status, "read_file a.txt: " .. vim.inspect(res))
  end)

  it("diagnostics cover the offending code (non-empty ranges, extmarks)", function()
    local ws = workspace({
      ["go.mod"] = "module m\n\ngo 1.22\n",
      ["main.go"] = 'package main\n\nfunc main() {\n\tvar s string = 1\n\t_ = s\n\tundefinedName()\n}\n',
    })
    local buf = open(ws .. "/main.go")
    -- Published diagnostics are a feature the server's config enables
    -- (docs/index.md); the client's capabilities stay the defaults.
    start(ws, { config = { lsp = { features = { "diagnostics" } } } })
    local ds
    wait(function()
      ds = vim.diagnostic.get(buf)
      return #ds >= 2
    end, "two diagnostics", 30000)
    for _, d in ipairs(ds) do
      truthy(d.end_lnum > d.lnum or d.end_col > d.col, "non-empty range: " .. vim.inspect(d))
    end
    local by = {}
    for _, d in ipairs(ds) do
      local text = api.nvim_buf_get_text(buf, d.lnum, d.col, d.end_lnum, d.end_col, {})[1]
      by[text] = d.message
    end
    truthy(by["1"] and by["1"]:find("cannot use", 1, true), "the literal 1 is marked: " .. vim.inspect(by))
    truthy(by["undefinedName"], "the undefined name is marked: " .. vim.inspect(by))
    -- The underline is drawn: an extmark with a width.
    local wide = 0
    for _, m in ipairs(api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
      local d = m[4]
      if d.end_row and (d.end_row > m[2] or (d.end_col or 0) > m[3]) then
        wide = wide + 1
      end
    end
    truthy(wide >= 2, "extmarks with a width for the diagnostics")
  end)
end)
