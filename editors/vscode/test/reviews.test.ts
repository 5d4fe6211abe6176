// Reviews in the VS Code extension: they offer exactly the server's
// options, label "always" with what it covers, say who asks, where and how
// long is left; the waiting reviews are listed; remembered answers are
// listed and revoked (approval/rules). Unit tests of core/, then the same
// against the REAL agentls binary.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ApprovalQueue, ApprovalRequest, alwaysButton, deadlineOf, describeRules, describeWaiting, offers, timeLeft, whoAsks,
} from '../src/core';
import { startEditor, waitFor } from './harness';

const base: ApprovalRequest = {
  callId: 'tc_1', tool: 'shell_exec', arguments: { command: 'echo x' }, risk: 'execute',
  options: ['approve', 'reject', 'always'], alwaysLabel: 'always allow `echo x …`',
  agent: 'claude', cwd: '/work/project', deadline: '2026-11-23T17:05:00Z', timeoutSeconds: 300,
};

describe('core: reviews follow the request', () => {
  test('offers exactly the options; never always for a dangerous call; approve and reject without options', () => {
    assert.equal(offers(base, 'always'), true);
    assert.equal(offers({ ...base, options: ['approve', 'reject'] }, 'always'), false);
    // A server that offered always for a dangerous call is not followed.
    assert.equal(offers({ ...base, risk: 'dangerous' }, 'always'), false);
    assert.equal(offers({ ...base, risk: 'dangerous' }, 'approve'), true);
    assert.equal(offers({ ...base, options: ['reject'] }, 'approve'), false);
    const none = { ...base, options: undefined as unknown as string[] };
    assert.deepEqual(['approve', 'reject', 'always'].map(d => offers(none, d as 'approve')), [true, true, false]);
  });

  test('always is labelled with what it covers', () => {
    assert.equal(alwaysButton(base), 'Always allow `echo x …`');
    assert.equal(alwaysButton({ ...base, alwaysLabel: undefined, tool: 'edit_file' }), 'Always allow edit_file');
  });

  test('time left: from the deadline, else timeoutSeconds from receipt; nothing without either', () => {
    const received = new Date('2026-11-23T17:00:00Z');
    const dl = Date.parse('2026-11-23T17:05:00Z');
    assert.equal(deadlineOf(base, received), dl);
    const t = timeLeft(base, received, dl - 272_000);
    assert.match(t, /^4:32 left \(rejected by itself at \d\d:\d\d:\d\d\)$/);
    assert.match(timeLeft(base, received, dl + 5000), /^0:00 left/);
    assert.equal(deadlineOf({ ...base, deadline: undefined }, received), received.getTime() + 300_000);
    assert.equal(timeLeft({ ...base, deadline: 'garbage', timeoutSeconds: undefined }, received), '');
  });

  test('who asks and where', () => {
    assert.equal(whoAsks(base), 'claude wants to run shell_exec in /work/project');
    assert.equal(whoAsks({ ...base, agent: undefined, cwd: undefined, tool: 'edit_file' }), 'The agent wants to run edit_file');
  });

  test('the list of waiting reviews says agent, tool, target, risk and time left', () => {
    const q = new ApprovalQueue();
    const { pending } = q.add(base);
    const dl = Date.parse(base.deadline!);
    const d = describeWaiting(pending, dl - 61_000);
    assert.equal(d.label, 'claude: shell_exec echo x (execute)');
    assert.equal(d.description, '1:01 left · tc_1');
    assert.match(d.detail, /in \/work\/project/);
  });

  test('remembered answers are listed by their label, persisted or not', () => {
    const items = describeRules([
      { id: 'r_1', tool: 'shell_exec', key: 'shell:echo x', label: 'always allow `echo x …`', persisted: true },
      { id: 'r_2', tool: 'edit_file', key: 'edit_file', label: '', persisted: false },
    ]);
    assert.deepEqual(items, [
      { label: 'always allow `echo x …`', description: 'shell_exec · persisted', id: 'r_1' },
      { label: 'always allow edit_file', description: 'edit_file · this session', id: 'r_2' },
    ]);
  });
});

const start = startEditor;

describe('server: what a review says', () => {
  test('a dangerous command offers no always and says agent, cwd and deadline; the folder survives a rejection', async () => {
    const e = await start({ 'somedir/keep.txt': 'k\n' }, { onApproval: (_r, key, q) => { q.answer(key, 'reject'); } });
    const r = await e.tools.callTool('shell_exec', { command: 'rm -r somedir' }, { agent: 'claude' });
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    const req = e.approvals[0];
    assert.equal(req.risk, 'dangerous');
    assert.deepEqual(req.options, ['approve', 'reject']);
    assert.equal(req.alwaysLabel, undefined);
    assert.equal(req.agent, 'claude');
    assert.equal(req.cwd, fs.realpathSync(e.root));
    assert.equal(req.timeoutSeconds, 300);
    assert.ok(Math.abs(Date.parse(req.deadline!) - Date.now() - 300_000) < 10_000, req.deadline);
    assert.ok(fs.existsSync(path.join(e.root, 'somedir', 'keep.txt')));
  });

  test('an edited call is judged again and asked again with its new risk', async () => {
    const e = await start({ 'somedir/keep.txt': 'k\n' }, {
      onApproval: (req, key, q) => {
        if (req.arguments?.command === 'echo x') { q.get(key)!.settle({ decision: 'approve', modifiedArguments: { command: 'rm -r somedir' } }); }
        else { q.answer(key, 'reject', 'not that'); }
      },
    });
    const r = await e.tools.callTool('shell_exec', { command: 'echo x' });
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    assert.equal(e.approvals.length, 2);
    assert.equal(e.approvals[1].callId, e.approvals[0].callId);
    assert.equal(e.approvals[1].risk, 'dangerous');
    assert.ok(!e.approvals[1].options.includes('always'));
    assert.ok(fs.existsSync(path.join(e.root, 'somedir', 'keep.txt')));
  });
});

describe('server: approval/rules', () => {
  test('lists the always answers with the label shown, revokes one, and the call asks again', async () => {
    const e = await start({ 'a.txt': 'a\n' }, { onApproval: (_r, key, q) => { q.answer(key, 'always'); } });
    assert.deepEqual((await e.tools.approvalRules()).rules, []);
    const r1 = await e.tools.callTool('shell_exec', { command: 'echo x' });
    assert.equal(r1.status, 'success', JSON.stringify(r1));
    assert.equal(e.approvals[0].alwaysLabel, 'always allow `echo x …`');
    const { rules } = await e.tools.approvalRules();
    assert.equal(rules.length, 1);
    assert.equal(rules[0].label, e.approvals[0].alwaysLabel);
    assert.equal(rules[0].tool, 'shell_exec');
    assert.equal(rules[0].persisted, false);
    await e.tools.callTool('shell_exec', { command: 'echo x' });
    assert.equal(e.approvals.length, 1, 'remembered: not asked');
    const removed = await e.tools.approvalRules(rules[0].id);
    assert.deepEqual(removed, { rules: [], removed: true });
    assert.deepEqual(await e.tools.approvalRules(rules[0].id), { rules: [], removed: false });
    await e.tools.callTool('shell_exec', { command: 'echo x' });
    await waitFor(() => e.approvals.length === 2, 5000, 'asked again after the revocation');
  });
});
