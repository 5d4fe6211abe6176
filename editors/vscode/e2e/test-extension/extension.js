// Test-only: the agent front-end of the end-to-end suite. "Agent E2E: Call
// Tool From Request File" reads $AGENTLS_E2E_DIR/request.json
// ({id, name, arguments, via}) and writes $AGENTLS_E2E_DIR/result-<id>.json.
// via "api" (the default) calls the agentls extension's public API
// (callTool; name "__list__" lists the tools); via "lm" invokes the
// language model tool `name` as VS Code's agents do (vscode.lm.invokeTool,
// outside a chat request) and answers with its text parts (name "__list__"
// lists vscode.lm.tools).
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

function dir() {
  return process.env.AGENTLS_E2E_DIR || path.join(vscode.workspace.workspaceFolders[0].uri.fsPath, '.e2e');
}

async function viaApi(req) {
  const ext = vscode.extensions.getExtension('agentls.agentls');
  const api = ext.isActive ? ext.exports : await ext.activate();
  return req.name === '__list__' ? api.listTools() : api.callTool(req.name, req.arguments || {});
}

async function viaLm(req) {
  if (req.name === '__list__') {
    return vscode.lm.tools.map(t => ({ name: t.name, tags: [...t.tags], hasSchema: !!t.inputSchema }));
  }
  const r = await vscode.lm.invokeTool(req.name, { input: req.arguments || {}, toolInvocationToken: undefined });
  return { texts: r.content.map(p => (p instanceof vscode.LanguageModelTextPart ? p.value : `(a part that is not text: ${JSON.stringify(p)})`)) };
}

exports.activate = function (context) {
  context.subscriptions.push(vscode.commands.registerCommand('agentlsE2E.call', async () => {
    const d = dir();
    const reqFile = path.join(d, 'request.json');
    const req = JSON.parse(fs.readFileSync(reqFile, 'utf8'));
    fs.rmSync(reqFile, { force: true });
    const write = (v) => fs.writeFileSync(path.join(d, `result-${req.id}.json.tmp`), JSON.stringify(v, null, 2)) ||
      fs.renameSync(path.join(d, `result-${req.id}.json.tmp`), path.join(d, `result-${req.id}.json`));
    try {
      write({ ok: true, result: await (req.via === 'lm' ? viaLm(req) : viaApi(req)) });
    } catch (err) {
      write({ ok: false, error: String(err && err.stack || err) });
    }
  }));
};

exports.deactivate = function () {};
