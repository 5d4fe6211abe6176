// The official MCP TypeScript SDK client against the real `agentls mcp`
// ($AGENTLS_BIN; run by scripts/mcp-test.sh) ATTACHED to an editor's
// session: the editor is the real `agentls serve` on stdio, driven by the
// small JSON-RPC client of editor.mjs, which answers approval/request like an
// agentls editor (approve, or reject with a message). `agentls mcp` is
// started in the workspace with no flag and must find the session by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Editor } from './editor.mjs';
import { tempDir } from './tmp.mjs';

const bin = process.env.AGENTLS_BIN;
if (!bin) throw new Error('AGENTLS_BIN is not set (run scripts/mcp-test.sh)');

// env isolates configuration, state and the runtime directory where
// sessions are published.
function isolatedEnv() {
  const home = tempDir('agentls-attach-node-');
  // (XDG_CACHE_HOME too: getDefaultEnvironment keeps HOME, and the server's
  // on-disk index copies would go to the user's ~/.cache/agentls)
  return { ...getDefaultEnvironment(), XDG_CONFIG_HOME: home, XDG_STATE_HOME: home, XDG_CACHE_HOME: home, XDG_RUNTIME_DIR: home };
}

const decide = (req) =>
  JSON.stringify(req.arguments).includes('reject-me')
    ? { decision: 'reject', message: 'not here: put it in notes.txt' }
    : { decision: 'approve' };

const textOf = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

test('attached: the edit is reviewed in the editor, a rejection reaches the client, SESSION_ENDED, re-attach', async () => {
  const root = tempDir('agentls-attach-ws-');
  fs.writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n');
  const env = isolatedEnv();
  let editor = new Editor(bin, root, env, decide);
  await editor.initialize(root); // the session is published before the answer

  const transport = new StdioClientTransport({ command: bin, args: ['mcp'], cwd: root, env, stderr: 'inherit' });
  const client = new Client({ name: 'node-agent', title: 'Node Agent', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  try {
    // No elicitation declared: standalone would refuse; attached, the editor asks.
    let res = await client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'two', new_string: '2' } });
    assert.equal(res.isError, undefined, textOf(res));
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'one\n2\n');
    assert.equal(editor.approvals.length, 1);
    assert.equal(editor.approvals[0].agent, 'Node Agent');
    assert.equal(editor.approvals[0].tool, 'edit_file');
    assert.ok(editor.events.some((e) => e.tool === 'edit_file'), 'the editor saw the call');

    res = await client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'one', new_string: 'reject-me' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^REJECTED: /);
    assert.match(textOf(res), /not here: put it in notes\.txt/);
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'one\n2\n');

    // The editor closes: a clear error, no hang.
    assert.equal(await editor.end(), 0);
    res = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^SESSION_ENDED: /);

    // A new editor session on the root: attached again without a restart.
    editor = new Editor(bin, root, env, decide);
    await editor.initialize(root);
    res = await client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'one', new_string: '1' } });
    assert.equal(res.isError, undefined, textOf(res));
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), '1\n2\n');
    assert.equal(editor.approvals.length, 1);
    assert.equal(editor.approvals[0].agent, 'Node Agent');
  } finally {
    await client.close();
    await editor.end().catch(() => {});
  }
});
