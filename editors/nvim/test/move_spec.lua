-- move_file of a buffer with unsaved changes, through the agentls plugin:
-- the server sends a RenameFile (docs/protocol.md, Approval: the table of
-- how each change of an edit travels), the plugin moves the file and the
-- buffer, and the unsaved text stays in the buffer, unsaved.
local H = require("helpers")
local api = vim.api
local approval = require("agentls.approval")

describe("moving an open buffer", function()
  after_each(H.reset)

  it("move_file of a modified buffer: the buffer visits the new path with its unsaved text, still unsaved", function()
    local ws, buf = H.project({ ["mv.txt"] = "saved\n" }, "mv.txt", { init_options = { config = { approval = { tools = { move_file = "ask" } } } } })
    api.nvim_buf_set_lines(buf, 0, -1, false, { "saved", "unsaved é😀" })
    local _, wait = H.call_async("move_file", { from = "mv.txt", to = "moved/mv2.txt" })
    local e = H.wait_approval()
    approval.approve(e)
    local res = wait()
    H.eq("success", res.status, "status: " .. vim.inspect(res))
    H.eq("editor", res.structured.applied_by, "applied_by")
    H.eq(ws .. "/moved/mv2.txt", api.nvim_buf_get_name(buf), "the buffer visits the new path")
    H.eq({ "saved", "unsaved é😀" }, api.nvim_buf_get_lines(buf, 0, -1, false), "the unsaved text")
    H.eq(true, vim.bo[buf].modified, "still unsaved")
    H.eq(nil, H.read(ws .. "/mv.txt"), "old path gone")
    H.eq("saved\n", H.read(ws .. "/moved/mv2.txt"), "the disk has the saved text")
    H.eq(-1, vim.fn.bufnr(ws .. "/mv.txt"), "no buffer left at the old path")
    local r = H.call("read_file", { path = "moved/mv2.txt" })
    H.contains(r.content, "unsaved é😀", "the server reads the buffer at its new path")
    -- :write writes the new path (no E13: the buffer visits that file).
    api.nvim_buf_call(buf, function()
      vim.cmd("silent write")
    end)
    H.eq("saved\nunsaved é😀\n", H.read(ws .. "/moved/mv2.txt"), "written at the new path")
  end)
end)
