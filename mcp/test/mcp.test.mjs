// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk)
// against the real `agentls mcp` binary over stdio ($AGENTLS_BIN; run by
// scripts/mcp-test.sh), standalone: a client that declares elicitation and
// approves or rejects, and one that does not and gets refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from './tmp.mjs';

const bin = process.env.AGENTLS_BIN;
if (!bin) throw new Error('AGENTLS_BIN is not set (run scripts/mcp-test.sh)');

function workspace() {
  const root = tempDir('agentls-mcp-node-');
  fs.writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n');
  return root;
}

// connect starts `agentls mcp --root ROOT` and connects a client; answer,
// when given, is the elicitation handler (the client then declares
// elicitation).
async function connect(root, answer) {
  const state = tempDir('agentls-mcp-state-');
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', '--root', root],
    // (getDefaultEnvironment keeps HOME: without XDG_CACHE_HOME the server's
    // on-disk index copies would go to the user's ~/.cache/agentls)
    env: { ...getDefaultEnvironment(), XDG_CONFIG_HOME: state, XDG_STATE_HOME: state, XDG_CACHE_HOME: state },
    stderr: 'inherit',
  });
  const capabilities = answer ? { elicitation: {} } : {};
  const client = new Client({ name: 'node-agent', title: 'Node Agent', version: '1.0.0' }, { capabilities });
  const asked = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answer(req.params);
    });
  }
  await client.connect(transport);
  return { client, asked, close: () => client.close() };
}

const textOf = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

test('tools/list: definitions and hints', async () => {
  const { client, close } = await connect(workspace());
  try {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.ok(byName.read_file && byName.edit_file && byName.shell_exec, 'tools listed');
    assert.equal(byName.read_file.annotations.readOnlyHint, true);
    assert.equal(byName.read_file.annotations.openWorldHint, false);
    assert.equal(byName.edit_file.annotations.destructiveHint, true);
    assert.equal(byName.shell_exec.annotations.openWorldHint, true);
    assert.equal(byName.read_file.inputSchema.type, 'object');
    assert.ok(byName.read_file.outputSchema, 'outputSchema');
    assert.ok(byName.read_file.title);
  } finally {
    await close();
  }
});

test('without elicitation: reads run, edits are refused with how to approve', async () => {
  const root = workspace();
  const { client, close } = await connect(root);
  try {
    // The SDK checks structuredContent against the tool's outputSchema.
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
    assert.equal(read.isError, undefined);
    assert.match(textOf(read), /two/);
    assert.equal(read.structuredContent.path, 'a.txt');

    const edit = await client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'two', new_string: 'deux' } });
    assert.equal(edit.isError, true);
    assert.match(textOf(edit), /^REJECTED: /);
    assert.match(textOf(edit), /does not support elicitation/);
    assert.match(textOf(edit), /open the workspace in an editor with agentls/);
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'one\ntwo\n');

    const missing = await client.callTool({ name: 'read_file', arguments: { path: 'nope.txt' } });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /^FILE_NOT_FOUND: [\s\S]*\nnext: /);
  } finally {
    await close();
  }
});

test('with elicitation: an approved edit lands', async () => {
  const root = workspace();
  const { client, asked, close } = await connect(root, () => ({ action: 'accept', content: { decision: 'approve' } }));
  try {
    const res = await client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'two', new_string: 'deux' } });
    assert.equal(res.isError, undefined, textOf(res));
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'one\ndeux\n');
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /^Node Agent wants to edit a\.txt \(edit_file\)/);
    assert.match(asked[0].message, /-two\n\+deux/);
    assert.deepEqual(asked[0].requestedSchema.properties.decision.enum, ['approve', 'reject', 'always']);
  } finally {
    await close();
  }
});

test('with elicitation: a rejection message reaches the result', async () => {
  const root = workspace();
  const { client, close } = await connect(root, () => ({ action: 'accept', content: { decision: 'reject', message: 'keep it in English' } }));
  try {
    const res = await client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'two', new_string: 'deux' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^REJECTED: .*keep it in English/);
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'one\ntwo\n');
  } finally {
    await close();
  }
});

test('with elicitation: progress, then cancellation ends the command', async () => {
  const root = workspace();
  const { client, close } = await connect(root, () => ({ action: 'accept', content: { decision: 'approve' } }));
  try {
    const seen = [];
    const res = await client.callTool(
      { name: 'shell_exec', arguments: { command: 'for i in 1 2 3; do echo step$i; sleep 0.05; done' } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    assert.equal(res.isError, undefined, textOf(res));
    const all = seen.map((p) => p.message).join('');
    assert.match(all, /step1[\s\S]*step3/);

    // A command that would outlive the test; the abort sends
    // notifications/cancelled and the server must end it.
    const secs = `${700 + (process.pid % 100)}.${Date.now() % 1000}`;
    const ac = new AbortController();
    const call = client.callTool({ name: 'shell_exec', arguments: { command: `sleep ${secs}; echo done` } }, undefined, { signal: ac.signal });
    const pid = await findProc(['sleep', secs]);
    ac.abort();
    await assert.rejects(call);
    await waitGone(pid);
  } finally {
    await close();
  }
});

async function findProc(argv) {
  const want = argv.join('\0') + '\0';
  for (let i = 0; i < 1000; i++) {
    for (const e of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      try {
        if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8') === want) return Number(e);
      } catch {}
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${argv.join(' ')} never started`);
}

async function waitGone(pid) {
  for (let i = 0; i < 500; i++) {
    let state;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      return;
    }
    if (state === 'Z') return;
    await new Promise((r) => setTimeout(r, 20));
  }
  try { process.kill(pid, 'SIGKILL'); } catch {}
  throw new Error(`process ${pid} still runs after the cancellation`);
}
