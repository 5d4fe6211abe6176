// The extension's core against the REAL agentls binary, over stdio, through
// vscode-languageserver-protocol's node connection.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildProposal, schemaErrors, serverConfig, ToolResult } from '../src/core';
import { FakeEditor, fileUri, startEditor, waitFor } from './harness';

const start = startEditor;

async function toolNames(e: FakeEditor): Promise<string[]> {
  return (await e.tools.listTools()).map(t => t.name);
}

/** Fails when the server lacks a tool the test needs (the suite's server
 * is built from this repository: a missing tool is a regression). */
async function needTool(e: FakeEditor, name: string): Promise<void> {
  assert.ok((await toolNames(e)).includes(name), `the server has no ${name} tool (agentls tools does not list it)`);
}

describe('initialize and tool/list', () => {
  test('the server answers initialize with serverInfo and experimental.agentls', async () => {
    const e = await start({});
    const r = e.initializeResult;
    assert.equal(r.serverInfo.name, 'agentls');
    assert.equal(r.capabilities.experimental.agentls.protocolVersion, 1);
    const tools = await e.tools.listTools();
    assert.equal(r.capabilities.experimental.agentls.tools, tools.length);
  });

  test('listTools returns the registry with schemas and annotations', async () => {
    const e = await start({});
    const tools = await e.tools.listTools();
    const names = tools.map(t => t.name);
    for (const n of ['read_file', 'edit_file', 'write_file']) { assert.ok(names.includes(n), `${n} in ${names}`); }
    const rf = tools.find(t => t.name === 'read_file')!;
    assert.equal((rf.inputSchema as { type: string }).type, 'object');
    assert.equal(rf.annotations?.readOnly, true);
    const openai = await e.tools.listTools({ format: 'openai' }) as unknown as Array<{ type: string }>;
    assert.equal(openai[0].type, 'function');
  });
});

describe('tool/call', () => {
  test('read_file returns the unsaved buffer of an open document', async () => {
    const e = await start({ 'notes.txt': 'on disk\n' });
    const uri = await e.open('notes.txt');
    await e.type(uri, 'typed but not saved\n');
    const r = await e.tools.callTool('read_file', { path: 'notes.txt' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.match(r.content, /typed but not saved/);
    assert.doesNotMatch(r.content, /on disk/);
  });

  test('schema errors come back as INVALID_PARAMS with one line per violation', async () => {
    const e = await start({});
    const r = await e.tools.callTool('read_file', { path: 5, bogus: true });
    assert.equal(r.status, 'error');
    assert.equal(r.error?.code, 'INVALID_PARAMS');
    const errs = schemaErrors(r);
    assert.ok(errs.some(l => l.startsWith('/path: ')), errs.join('\n'));
    assert.ok(errs.some(l => l.startsWith('/bogus: ')), errs.join('\n'));
  });

  test('an unknown tool is a ToolResult error, not a JSON-RPC error', async () => {
    const e = await start({});
    const r = await e.tools.callTool('no_such_tool', {});
    assert.equal(r.status, 'error');
    assert.equal(r.error?.code, 'UNKNOWN_TOOL');
  });

  test('the call streams $/progress begin and end on the token the client chose, and tool/events', async () => {
    const e = await start({ 'a.txt': 'x\n' });
    const seen: string[] = [];
    const r = await e.tools.callTool('read_file', { path: 'a.txt' }, { onProgress: v => seen.push(v.kind) });
    assert.equal(r.status, 'success');
    assert.equal(seen[0], 'begin');
    assert.equal(seen[seen.length - 1], 'end');
    await waitFor(() => e.events.some(ev => ev.callId === r.callId && ev.kind === 'result'), 3000, 'tool/event result');
    assert.ok(e.events.some(ev => ev.callId === r.callId && ev.kind === 'call'));
  });
});

describe('partial results', () => {
  test('grep sends batches of matches on the partialResultToken', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) { files[`f${i}.txt`] = `needle ${i}\nhay\n`; }
    const e = await start(files);
    await needTool(e, 'grep');
    const batches: unknown[] = [];
    const r = await e.tools.callTool('grep', { pattern: 'needle' }, { onPartialResult: v => batches.push(v) });
    assert.equal(r.status, 'success', JSON.stringify(r));
    // LSP 3.17: the batches are the whole result; the final one repeats none (docs/protocol.md, partialResultToken).
    assert.equal(r.structured.matches.length, 0);
    assert.equal(r.structured.streamed, 30);
    assert.ok(batches.length > 0, 'at least one batch');
    assert.equal(batches.reduce((n: number, b: any) => n + (b.matches?.length ?? 0), 0), 30);
  });
});

describe('approval/request and applyEdit (diff view flow)', () => {
  test('approve: the edit lands in the buffer, the clean buffer is saved, disk has it', async () => {
    const e = await start({ 'a.txt': 'one\ntwo\nthree\n' }, {
      onApproval: (_req, key, q) => { setTimeout(() => q.answer(key, 'approve'), 50); },
    });
    const uri = await e.open('a.txt');
    const r = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    // The request carried what the diff view shows.
    const req = e.approvals[0];
    assert.equal(req.tool, 'edit_file');
    assert.equal(req.risk, 'write');
    const p = buildProposal('k', req)!;
    assert.equal(p.files[0].path, 'a.txt');
    assert.equal(p.files[0].oldText, 'one\ntwo\nthree\n');
    assert.equal(p.files[0].newText, 'one\nTWO\nthree\n');
    // A plain applyEdit (no confirmation annotations) came after the approval.
    assert.equal(e.applyEdits.length, 1);
    assert.equal(Object.values(e.applyEdits[0].changeAnnotations ?? {}).some(a => a.needsConfirmation), false);
    assert.equal(e.text(uri), 'one\nTWO\nthree\n');
    assert.deepEqual(e.saved, [uri]);
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.equal(r.structured.applied_by, 'editor');
    assert.equal(r.structured.landed, 'all');
    assert.deepEqual(r.structured.unsaved, []);
    assert.equal(r.approvedBy, 'user');
  });

  test('edits land at the right UTF-16 positions after non-ASCII text (é, 中, 😀)', async () => {
    const e = await start({ 'u.txt': 'é中😀 target 😀 tail\nnext é line target\n' }, {
      onApproval: (_r, key, q) => { q.answer(key, 'approve'); },
    });
    const uri = await e.open('u.txt');
    const r = await e.tools.callTool('edit_file', { path: 'u.txt', old_string: 'target', new_string: 'HIT', replace_all: true });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(e.text(uri), 'é中😀 HIT 😀 tail\nnext é line HIT\n');
    assert.equal(fs.readFileSync(path.join(e.root, 'u.txt'), 'utf8'), 'é中😀 HIT 😀 tail\nnext é line HIT\n');
  });

  test('a buffer with unsaved changes is edited but not saved, and the result says so', async () => {
    const e = await start({ 'b.txt': 'alpha\nbeta\n' }, {
      onApproval: (_req, key, q) => { q.answer(key, 'approve'); },
    });
    const uri = await e.open('b.txt');
    await e.type(uri, 'alpha\nbeta\ngamma (unsaved)\n');
    const r = await e.tools.callTool('edit_file', { path: 'b.txt', old_string: 'beta', new_string: 'BETA' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(e.text(uri), 'alpha\nBETA\ngamma (unsaved)\n');
    assert.deepEqual(e.saved, []);
    assert.equal(fs.readFileSync(path.join(e.root, 'b.txt'), 'utf8'), 'alpha\nbeta\n');
    assert.deepEqual(r.structured.unsaved, ['b.txt']);
  });

  test('a file that is not open is edited and saved (write_file over an existing file)', async () => {
    const e = await start({ 'c.txt': 'old\n' }, { onApproval: (_r, key, q) => { q.answer(key, 'approve'); } });
    await e.tools.callTool('read_file', { path: 'c.txt' });
    const r = await e.tools.callTool('write_file', { path: 'c.txt', content: 'new\n' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(fs.readFileSync(path.join(e.root, 'c.txt'), 'utf8'), 'new\n');
    assert.equal(e.saved.length, 1);
  });

  test('reject with a message: nothing changes, the result is rejected and carries the message', async () => {
    const e = await start({ 'a.txt': 'keep\n' }, { onApproval: (_r, key, q) => { q.answer(key, 'reject', 'not like this'); } });
    const uri = await e.open('a.txt');
    const r = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'keep', new_string: 'lose' });
    assert.equal(r.status, 'rejected');
    assert.match(JSON.stringify(r), /not like this/);
    assert.equal(e.applyEdits.length, 0);
    assert.equal(e.text(uri), 'keep\n');
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'keep\n');
  });

  test('always: the next call of the tool does not ask', async () => {
    const e = await start({ 'a.txt': '1\n2\n' }, { onApproval: (_r, key, q) => { q.answer(key, 'always'); } });
    await e.open('a.txt');
    const r1 = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: '1', new_string: 'one' });
    assert.equal(r1.status, 'success', JSON.stringify(r1));
    const r2 = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: '2', new_string: 'two' });
    assert.equal(r2.status, 'success', JSON.stringify(r2));
    assert.equal(e.approvals.length, 1);
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'one\ntwo\n');
  });

  test('several approvals wait at once and are answered in any order; the queue counts them', async () => {
    const e = await start({ 'x.txt': 'x\n', 'y.txt': 'y\n' });
    const px = e.tools.callTool('edit_file', { path: 'x.txt', old_string: 'x', new_string: 'X' });
    const py = e.tools.callTool('edit_file', { path: 'y.txt', old_string: 'y', new_string: 'Y' });
    await waitFor(() => e.queue.size === 2, 5000, 'two pending approvals');
    // Another request goes through while both wait.
    assert.equal((await e.tools.callTool('get_current_directory', {})).status, 'success');
    const [first, second] = e.queue.list();
    const kx = first.request.arguments?.path === 'x.txt' ? first : second;
    const ky = kx === first ? second : first;
    ky.settle({ decision: 'reject' });
    kx.settle({ decision: 'approve' });
    const [rx, ry] = await Promise.all([px, py]);
    assert.equal(rx.status, 'success');
    assert.equal(ry.status, 'rejected');
    assert.equal(e.queue.size, 0);
  });

  test('cancelling a call waiting for approval gives cancelled and drops the pending approval', async () => {
    const e = await start({ 'a.txt': 'a\n' });
    let cancel!: () => void;
    const listeners: Array<() => void> = [];
    const token = { isCancellationRequested: false, onCancellationRequested(l: () => void) { listeners.push(l); return { dispose() {} }; } };
    cancel = () => { token.isCancellationRequested = true; listeners.forEach(l => l()); };
    const p = e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'a', new_string: 'b' }, { token });
    await waitFor(() => e.queue.size === 1, 5000, 'pending approval');
    cancel();
    const r: ToolResult = await p;
    assert.equal(r.status, 'cancelled');
    await waitFor(() => e.queue.size === 0, 5000, 'the pending approval to be dropped');
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'a\n');
  });
});

describe('approval timeout', () => {
  test('an approval the server gave up on (approval.timeoutSeconds) is dropped from the queue', async () => {
    const e = await start({ 'a.txt': 'a\n' }, {}, { approval: { timeoutSeconds: 1 } });
    const p = e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'a', new_string: 'b' });
    await waitFor(() => e.queue.size === 1, 5000, 'pending approval');
    const r = await p;
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    assert.match(r.content, /timeoutSeconds|no answer/);
    // The server does not cancel its approval/request ($/cancelRequest); the
    // tool/event result is what tells the client to close the approval UI.
    await waitFor(() => e.queue.size === 0, 5000, 'the timed-out approval to be dropped');
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'a\n');
  });
});

describe('nativePreview (Refactor Preview flow)', () => {
  test('no approval/request: an annotated applyEdit; Discard gives rejected', async () => {
    const e = await start({ 'a.txt': 'same\n' }, { nativePreview: true, confirmEdit: () => false });
    await e.open('a.txt');
    const r = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'same', new_string: 'changed' });
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    assert.equal(e.approvals.length, 0);
    assert.equal(e.applyEdits.length, 1);
    const ann = Object.values(e.applyEdits[0].changeAnnotations ?? {});
    assert.ok(ann.length > 0 && ann.every(a => a.needsConfirmation));
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'same\n');
  });

  test('Apply in the preview: the edit lands and is saved', async () => {
    const e = await start({ 'a.txt': 'same\n' }, { nativePreview: true, confirmEdit: () => true });
    await e.open('a.txt');
    const r = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'same', new_string: 'changed' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'changed\n');
  });
});

describe('configuration from settings', () => {
  test('settings.agentls built by serverConfig is accepted, and applies (approval.tools)', async () => {
    const e = await start({ 'a.txt': 'a\n' });
    await e.open('a.txt');
    const settings = serverConfig([['server.path', '/x'], ['approval.nativePreview', false], ['approval.tools', { edit_file: 'auto' }]]);
    await e.conn.sendNotification('workspace/didChangeConfiguration', { settings: { agentls: settings } });
    const r = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'a', new_string: 'b' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(e.approvals.length, 0);
    assert.deepEqual(e.messages, []);
  });

  test('an invalid setting is reported with showMessage', async () => {
    const e = await start({});
    await e.conn.sendNotification('workspace/didChangeConfiguration', { settings: { agentls: { approval: { mode: 'sometimes' } } } });
    await waitFor(() => e.messages.length > 0, 3000, 'showMessage');
    assert.match(e.messages[0].message, /mode|approval/);
  });

  test('initializationOptions.config is applied', async () => {
    const e = await start({ 'a.txt': 'a\n' }, {}, serverConfig([['approval.mode', 'yolo']]));
    await e.open('a.txt');
    const r = await e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'a', new_string: 'b' });
    assert.equal(r.status, 'success');
    assert.equal(e.approvals.length, 0);
  });
});

describe('shell_exec', () => {
  test('a command needing approval streams its output on the workDoneToken', async () => {
    const e = await start({}, { onApproval: (req, key, q) => { if (req.tool === 'shell_exec') { q.answer(key, 'approve'); } } });
    await needTool(e, 'shell_exec');
    const chunks: string[] = [];
    const r = await e.tools.callTool('shell_exec', { command: 'echo first; sleep 0.3; echo second' }, {
      onProgress: v => { if (v.kind === 'report' && v.message) { chunks.push(v.message); } },
    });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(e.approvals[0]?.tool, 'shell_exec');
    assert.equal(e.approvals[0]?.risk, 'execute');
    const streamed = chunks.join('');
    assert.match(streamed, /first/);
    assert.match(streamed, /second/);
    assert.match(r.structured.stdout, /first\nsecond/);
  });
});

void fileUri;
