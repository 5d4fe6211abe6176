// Test-only: the agent front-end of the end-to-end suite. "Agent E2E: Call
// Tool From Request File" reads $AGENTLS_E2E_DIR/request.json
// ({id, name, arguments}), calls the agentls extension's public API and
// writes $AGENTLS_E2E_DIR/result-<id>.json.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

function dir() {
  return process.env.AGENTLS_E2E_DIR || path.join(vscode.workspace.workspaceFolders[0].uri.fsPath, '.e2e');
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
      const ext = vscode.extensions.getExtension('agentls.agentls');
      const api = ext.isActive ? ext.exports : await ext.activate();
      const result = req.name === '__list__' ? await api.listTools() : await api.callTool(req.name, req.arguments || {});
      write({ ok: true, result });
    } catch (err) {
      write({ ok: false, error: String(err && err.stack || err) });
    }
  }));
};

exports.deactivate = function () {};
