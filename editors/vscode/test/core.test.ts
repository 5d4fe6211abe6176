// Unit tests of the core module (no server, no VS Code).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ApprovalQueue, ApprovalRequest, ProgressPrinter, SavePlan, applyUnifiedDiff, argumentsTemplate, buildProposal,
  describeRequest, diffStat, formatEvent, isAgentlsToken, needsConfirmation, newProgressToken, parseArguments,
  parseProposalUri, proposalUriParts, resolveServer, schemaErrors, serverConfig, settingsFromSchema, splitUnifiedDiff,
  renamedFrom, statusText, summarizeResult, touchedUris,
} from '../src/core';

const root = path.resolve(__dirname, '..', '..');

test('core/ never imports vscode', () => {
  const dir = path.join(root, 'src', 'core');
  for (const f of fs.readdirSync(dir)) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    assert.doesNotMatch(text, /from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)/, `${f} imports vscode`);
    assert.doesNotMatch(text, /from\s+['"]vscode-languageclient/, `${f} imports vscode-languageclient (which needs vscode)`);
  }
});

test('applyUnifiedDiff: modify, add, remove, several hunks', () => {
  const old = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';
  const diff = [
    '--- a/x.txt', '+++ b/x.txt',
    '@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c',
    '@@ -8,3 +8,4 @@', ' h', ' i', '+i2', ' j',
  ].join('\n') + '\n';
  assert.equal(applyUnifiedDiff(old, diff), 'a\nB\nc\nd\ne\nf\ng\nh\ni\ni2\nj\n');
});

test('applyUnifiedDiff: create from empty, no newline at end, mismatch', () => {
  assert.equal(applyUnifiedDiff('', '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n'), 'one\ntwo\n');
  assert.equal(applyUnifiedDiff('x\ny\n', '@@ -1,2 +1,2 @@\n x\n-y\n+z\n\\ No newline at end of file\n'), 'x\nz');
  assert.equal(applyUnifiedDiff('x\ny\n', '@@ -1,2 +1,2 @@\n x\n-nope\n+z\n'), undefined);
  assert.equal(applyUnifiedDiff('x\n', 'no hunks here'), undefined);
});

test('splitUnifiedDiff and diffStat', () => {
  const d = '--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-1\n+one\n--- /dev/null\n+++ b/two.txt\n@@ -0,0 +1 @@\n+two\n';
  const parts = splitUnifiedDiff(d);
  assert.deepEqual(parts.map(p => [p.oldPath, p.newPath]), [['one.txt', 'one.txt'], ['/dev/null', 'two.txt']]);
  assert.deepEqual(diffStat(d), { added: 2, removed: 1 });
});

const editRequest: ApprovalRequest = {
  callId: 'tc_1', tool: 'edit_file', arguments: { path: 'a.txt', old_string: 'b', new_string: 'B' }, risk: 'write',
  preview: {
    unifiedDiff: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n',
    files: [{ path: 'a.txt', uri: 'file:///w/a.txt', operation: 'modify', oldText: 'a\nb\n', newText: 'a\nB\n' }],
  },
  options: ['approve', 'reject', 'always'],
};

test('buildProposal: texts from the preview, or rebuilt from the diff and the buffer', () => {
  const p = buildProposal('k', editRequest)!;
  assert.equal(p.files.length, 1);
  assert.equal(p.files[0].oldText, 'a\nb\n');
  assert.equal(p.files[0].newText, 'a\nB\n');
  assert.match(p.title, /edit_file: a\.txt/);

  const noTexts: ApprovalRequest = { ...editRequest, preview: { ...editRequest.preview!, files: [{ path: 'a.txt', operation: 'modify' }] } };
  const q = buildProposal('k', noTexts, () => 'a\nb\n')!;
  assert.equal(q.files[0].newText, 'a\nB\n');

  const create: ApprovalRequest = { ...editRequest, preview: { unifiedDiff: '', files: [{ path: 'n.txt', operation: 'create', newText: 'new\n' }] } };
  assert.deepEqual([buildProposal('k', create)!.files[0].oldText, buildProposal('k', create)!.files[0].newText], ['', 'new\n']);

  const shell: ApprovalRequest = { callId: 'tc_2', tool: 'shell_exec', arguments: { command: 'ls' }, risk: 'execute', options: [] };
  assert.equal(buildProposal('k', shell), undefined);
});

test('proposal paths round-trip', () => {
  const p = proposalUriParts('tc_1#2&x', 'new', 3, 'dir/a b.txt');
  assert.equal(p.path, '/dir/a b.txt');
  assert.deepEqual(parseProposalUri(p.path, p.query), { key: 'tc_1#2&x', side: 'new', index: 3, filePath: 'dir/a b.txt' });
  assert.equal(parseProposalUri('/nope', ''), undefined);
  assert.equal(parseProposalUri('/a', 'key=k&side=middle&i=0'), undefined);
});

test('ApprovalQueue: answer once, drop, cancellation, change events', async () => {
  const q = new ApprovalQueue();
  let changes = 0;
  q.onDidChange(() => changes++);
  const a = q.add(editRequest);
  const b = q.add({ ...editRequest, callId: 'tc_1' }); // same callId: a distinct key
  assert.notEqual(a.key, b.key);
  assert.equal(q.size, 2);
  assert.equal(q.answer(a.key, 'reject', 'no thanks'), true);
  assert.equal(q.answer(a.key, 'approve'), false);
  assert.deepEqual(await a.answer, { decision: 'reject', message: 'no thanks' });
  assert.equal(q.drop('tc_1'), 1);
  assert.equal(await b.answer, undefined);
  assert.equal(q.size, 0);

  let cancel!: () => void;
  const token = { isCancellationRequested: false, onCancellationRequested(l: () => void) { cancel = l; return { dispose() {} }; } };
  const c = q.add({ ...editRequest, callId: 'tc_3' }, token);
  cancel();
  assert.equal(await c.answer, undefined);
  assert.ok(changes >= 5);
  assert.equal(statusText(0), '$(tools) agentls');
  assert.equal(statusText(2), '$(bell-dot) agentls: 2 waiting');
  assert.equal(describeRequest(editRequest), 'edit_file a.txt (write)');
  assert.equal(describeRequest({ callId: 'x', tool: 'shell_exec', arguments: { command: 'make test' }, risk: 'execute', options: [] }), 'shell_exec make test (execute)');
});

test('ApprovalQueue: a withdrawal at the deadline is an expiry, one long before it is not', async () => {
  const q = new ApprovalQueue();
  const expired: string[] = [];
  q.onDidExpire((p) => { expired.push(p.request.callId); });
  const at = (ms: number) => new Date(Date.now() + ms).toISOString();
  for (const [callId, inMs, want] of [['tc_due', 1000, true], ['tc_early', 60000, false]] as const) {
    let cancel!: () => void;
    const token = { isCancellationRequested: false, onCancellationRequested(l: () => void) { cancel = l; return { dispose() {} }; } };
    const r = q.add({ ...editRequest, callId, expiresAt: at(inMs), timeoutMs: inMs }, token);
    cancel(); // the server's $/cancelRequest, before the local timer
    assert.equal(await r.answer, undefined);
    assert.equal(expired.includes(callId), want, `${callId}: expired ${expired}`);
  }
  assert.equal(q.size, 0);
});

test('touchedUris, needsConfirmation and SavePlan', () => {
  const edit = {
    documentChanges: [
      { textDocument: { uri: 'file:///w/a.txt', version: 3 }, edits: [] },
      { kind: 'create' as const, uri: 'file:///w/new.txt' },
      { textDocument: { uri: 'file:///w/new.txt', version: null }, edits: [] },
      { kind: 'rename' as const, oldUri: 'file:///w/old.txt', newUri: 'file:///w/renamed.txt' },
      { textDocument: { uri: 'file:///w/dirty.txt', version: 7 }, edits: [] },
      { kind: 'delete' as const, uri: 'file:///w/gone.txt' },
    ],
    changeAnnotations: { agentls: { label: 'x', needsConfirmation: true } },
  };
  const uris = touchedUris(edit);
  assert.deepEqual(uris.sort(), ['file:///w/a.txt', 'file:///w/dirty.txt', 'file:///w/new.txt', 'file:///w/renamed.txt']);
  assert.equal(needsConfirmation(edit), true);
  assert.equal(needsConfirmation({ changes: {} }), false);
  const dirty: Record<string, boolean> = { 'file:///w/a.txt': false, 'file:///w/dirty.txt': true };
  const plan = new SavePlan(uris, u => dirty[u]);
  assert.deepEqual(plan.toSave().sort(), ['file:///w/a.txt', 'file:///w/new.txt', 'file:///w/renamed.txt']);
  assert.deepEqual(plan.leftUnsaved(), ['file:///w/dirty.txt']);
  // A renamed document was dirty or not under its old URI.
  const from = renamedFrom(edit);
  assert.deepEqual([...from], [['file:///w/renamed.txt', 'file:///w/old.txt']]);
  const chain = renamedFrom({ documentChanges: [
    { kind: 'rename', oldUri: 'file:///w/a', newUri: 'file:///w/b' },
    { kind: 'rename', oldUri: 'file:///w/b', newUri: 'file:///w/c' },
  ] });
  assert.deepEqual([...chain], [['file:///w/c', 'file:///w/a']]);
  const moved = new SavePlan(['file:///w/renamed.txt'], u => ({ 'file:///w/old.txt': true } as Record<string, boolean>)[from.get(u) ?? u]);
  assert.deepEqual(moved.toSave(), [], 'a dirty document moved stays unsaved');
});

test('parseArguments, argumentsTemplate, schemaErrors, summarizeResult', () => {
  assert.deepEqual(parseArguments(''), { ok: true, value: {} });
  assert.deepEqual(parseArguments('{"path": "a"}'), { ok: true, value: { path: 'a' } });
  assert.equal(parseArguments('[1]').ok, false);
  const bad = parseArguments('{path: a}');
  assert.equal(bad.ok, false);
  assert.match((bad as { error: string }).error, /not valid JSON/);
  assert.equal(argumentsTemplate({ type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' }, mode: { enum: ['x', 'y'] } }, required: ['path', 'limit', 'mode'] }),
    '{"path":"","limit":0,"mode":"x"}');
  const r = {
    callId: 'c', tool: 'read_file', status: 'error' as const, content: '',
    error: { code: 'INVALID_PARAMS', message: 'm', details: { violations: [{ pointer: '/path', reason: 'got number, want string' }] } },
  };
  assert.deepEqual(schemaErrors(r), ['/path: got number, want string']);
  assert.equal(summarizeResult(r), 'read_file: invalid arguments: /path: got number, want string');
  assert.equal(summarizeResult({ callId: 'c', tool: 't', status: 'rejected', content: '', message: 'nope' }), 't was rejected: nope');
});

test('serverConfig keeps explicit server settings only', () => {
  const cfg = serverConfig([
    ['server.path', '/bin/agentls'], ['approval.nativePreview', true], ['agent', 'x'],
    ['approval.mode', 'ask'], ['shell.allow', ['go test']], ['approval.timeoutSeconds', undefined], ['agents', { a: { tools: 'all' } }],
  ]);
  assert.deepEqual(cfg, { approval: { mode: 'ask' }, shell: { allow: ['go test'] }, agents: { a: { tools: 'all' } } });
});

test('contributed settings match the server config schema', () => {
  const schema = JSON.parse(fs.readFileSync(path.join(root, '..', '..', 'workspace', 'config.schema.json'), 'utf8'));
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const contributed = pkg.contributes.configuration.properties as Record<string, unknown>;
  const expected = settingsFromSchema(schema);
  for (const [k, v] of Object.entries(expected)) {
    assert.deepEqual(contributed[k], v, `setting ${k} differs from the schema: run node gen-settings.mjs`);
  }
  for (const k of Object.keys(contributed)) {
    const own = ['agentls.server.path', 'agentls.server.args', 'agentls.approval.nativePreview', 'agentls.agent', 'agentls.trace.server'];
    assert.ok(own.includes(k) || k in expected, `setting ${k} is not in the server's schema`);
  }
  assert.equal(JSON.stringify(expected).includes('$ref'), false);
});

test('formatEvent and ProgressPrinter', () => {
  const at = new Date('2026-01-01T10:11:12Z');
  assert.equal(formatEvent({ callId: 'tc_1', tool: 'shell_exec', kind: 'call', arguments: { command: 'ls' }, needsApproval: true }, at),
    '[10:11:12] shell_exec tc_1 call {"command":"ls"} (needs approval)');
  assert.equal(formatEvent({ callId: 'tc_1', tool: 'edit_file', kind: 'fileChanged', path: 'a.txt', operation: 'modify' }, at),
    '[10:11:12] edit_file tc_1 modify a.txt');
  const p = new ProgressPrinter();
  const out = [
    p.format({ kind: 'begin', title: 'shell_exec' }, at),
    p.format({ kind: 'report', message: 'hel' }),
    p.format({ kind: 'report', message: 'lo\nwor' }),
    p.format({ kind: 'end', message: 'success' }, at),
  ].join('');
  assert.equal(out, '[10:11:12] ▶ shell_exec\nhello\nwor\n[10:11:12] ■ success\n');
});

test('progress tokens are unique and recognised', () => {
  const a = newProgressToken(), b = newProgressToken();
  assert.notEqual(a, b);
  assert.ok(isAgentlsToken(a));
  assert.equal(isAgentlsToken(42), false);
  assert.equal(isAgentlsToken('other'), false);
});

test('resolveServer: absolute path, relative path, PATH lookup, missing', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-resolve-'));
  try {
    const bin = path.join(dir, 'agentls');
    fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'notexec'), '', { mode: 0o644 });
    assert.equal(resolveServer(bin), bin);
    assert.equal(resolveServer('./agentls', '', dir), bin);
    assert.equal(resolveServer('', `/nonexistent:${dir}`), bin);
    assert.equal(resolveServer('agentls', '/nonexistent'), undefined);
    assert.equal(resolveServer(path.join(dir, 'notexec')), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
