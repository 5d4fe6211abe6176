// A minimal agentls editor for the tests of mcp/test and mcp/e2e-claude:
// the real `agentls serve` on stdio, driven by a small JSON-RPC client that
// answers approval/request like an agentls editor (decide(params) gives the
// answer: approve, or reject with a message), records the requests and the
// tool/event notifications, and answers other requests with null.
import { spawn } from 'node:child_process';
import path from 'node:path';

// Editor speaks LSP (Content-Length frames) to `agentls serve` (bin) started
// in root with env.
export class Editor {
  constructor(bin, root, env, decide) {
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
