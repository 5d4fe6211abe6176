// The official MCP TypeScript SDK client against the real `agentls mcp`
// ($AGENTLS_BIN; run by scripts/mcp-test.sh) ATTACHED to an editor's
// session: the editor is the real `agentls serve` on stdio, driven by the
// small JSON-RPC client below, which answers approval/request like an
// agentls editor (approve, or reject with a message). `agentls mcp` is
// started in the workspace with no flag and must find the session by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const bin = process.env.AGENTLS_BIN;
if (!bin) throw new Error('AGENTLS_BIN is not set (run scripts/mcp-test.sh)');

// env isolates configuration, state and the runtime directory where
// sessions are published.
function isolatedEnv() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-attach-node-'));
  return { ...getDefaultEnvironment(), XDG_CONFIG_HOME: home, XDG_STATE_HOME: home, XDG_RUNTIME_DIR: home };
}

// Editor speaks LSP (Content-Length frames) to `agentls serve`.
class Editor {
  constructor(root, env, decide) {
    this.proc = spawn(bin, ['serve'], { cwd: root, env, stdio: ['pipe', 'pipe', 'inherit'] });
    this.decide = decide;
    this.next = 1;
    this.pending = new Map();
    this.approvals = [];
    this.events = [];
    this.buf = Buffer.alloc(0);
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
    this.proc.stdout.on('data', (d) => this.read(d));
  }

  send(msg) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }));
    this.proc.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.proc.stdin.write(body);
  }

  request(method, params) {
    const id = this.next++;
    this.send({ id, method, params });
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  read(data) {
    this.buf = Buffer.concat([this.buf, data]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /Content-Length: *(\d+)/i.exec(this.buf.subarray(0, end).toString());
      const len = Number(m[1]);
      if (this.buf.length < end + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(end + 4, end + 4 + len).toString());
      this.buf = this.buf.subarray(end + 4 + len);
      this.handle(msg);
    }
  }

  handle(msg) {
    if (msg.method === undefined) {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error.message));
      else p?.resolve(msg.result);
    } else if (msg.method === 'approval/request') {
      this.approvals.push(msg.params);
      this.send({ id: msg.id, result: this.decide(msg.params) });
    } else if (msg.method === 'tool/event') {
      this.events.push(msg.params);
    } else if (msg.id !== undefined) {
      this.send({ id: msg.id, result: null });
    }
  }

  async initialize(root) {
    const uri = 'file://' + root;
    await this.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'Node Editor' },
      rootUri: uri,
      workspaceFolders: [{ uri, name: path.basename(root) }],
      capabilities: { experimental: { agentls: { approvalRequest: true } } },
    });
    this.send({ method: 'initialized', params: {} });
  }

  async end() {
    await this.request('shutdown', null);
    this.send({ method: 'exit' });
    return this.exited;
  }
}

const decide = (req) =>
  JSON.stringify(req.arguments).includes('reject-me')
    ? { decision: 'reject', message: 'not here: put it in notes.txt' }
    : { decision: 'approve' };

const textOf = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

test('attached: the edit is reviewed in the editor, a rejection reaches the client, SESSION_ENDED, re-attach', async () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-attach-ws-')));
  fs.writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n');
  const env = isolatedEnv();
  let editor = new Editor(root, env, decide);
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
    editor = new Editor(root, env, decide);
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
