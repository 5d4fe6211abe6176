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
  ApprovalQueue, ApprovalRequest, alwaysButton, deadlineOf, describeRules, describeWaiting, offers, soonestLeft, statusText,
  timeLeft, whoAsks,
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

  test('time left: expiresAt when the clocks agree with timeoutMs, timeoutMs from receipt when not', () => {
    const received = new Date('2026-11-23T17:00:00Z');
    const t0 = received.getTime();
    const cases: Array<[string, Partial<ApprovalRequest>, number | undefined]> = [
      ['clocks agree', { expiresAt: '2026-11-23T17:05:00.250Z', timeoutMs: 299_000 }, t0 + 300_250],
      ['local clock an hour behind', { expiresAt: '2026-11-23T18:02:00.000Z', timeoutMs: 120_000 }, t0 + 120_000],
      ['local clock an hour ahead', { expiresAt: '2026-11-23T16:02:00.000Z', timeoutMs: 120_000 }, t0 + 120_000],
      ['timeoutMs alone', { timeoutMs: 90_500 }, t0 + 90_500],
      ['expiresAt alone', { expiresAt: '2026-11-23T18:01:00+01:00' }, t0 + 60_000],
      ['older fields', { deadline: '2026-11-23T17:01:00Z', timeoutSeconds: 60 }, t0 + 60_000],
      ['nothing', {}, undefined],
    ];
    for (const [name, fields, want] of cases) {
      const r = { ...base, deadline: undefined, timeoutSeconds: undefined, ...fields };
      assert.equal(deadlineOf(r, received), want, name);
    }
  });

  test('the status bar counts down to the first deadline', () => {
    const q = new ApprovalQueue();
    const now = Date.now();
    q.add({ ...base, callId: 'tc_a', timeoutMs: 300_000, expiresAt: new Date(now + 300_000).toISOString() });
    q.add({ ...base, callId: 'tc_b', timeoutMs: 62_000, expiresAt: new Date(now + 62_000).toISOString() });
    const left = soonestLeft(q.list(), now + 1000);
    assert.equal(left, '1:01');
    assert.equal(statusText(q.size, left), '$(bell-dot) agentls: 2 waiting · 1:01 left');
    assert.equal(statusText(1, ''), '$(bell-dot) agentls: 1 waiting');
    q.clear();
  });

  test('at its deadline a request leaves the queue unanswered, until the server withdraws it', async () => {
    const q = new ApprovalQueue();
    let cancel!: () => void;
    const token = {
      isCancellationRequested: false,
      onCancellationRequested: (l: () => void) => { cancel = l; return { dispose() {} }; },
    };
    const expired: string[] = [];
    q.onDidExpire((p, key) => { expired.push(`${key} ${p.request.callId}`); });
    const { key, answer } = q.add({ ...base, timeoutMs: 300, expiresAt: new Date(Date.now() + 300).toISOString() }, token);
    let settled: unknown = 'pending';
    void answer.then(r => { settled = r; });
    assert.equal(q.size, 1);
    await waitFor(() => expired.length === 1, 5000, 'the expiry');
    assert.deepEqual(expired, [`${key} tc_1`]);
    assert.equal(q.size, 0, 'gone from the queue');
    assert.equal(q.answer(key, 'approve'), false, 'no longer answerable');
    await new Promise(r => setTimeout(r, 50));
    assert.equal(settled, 'pending', 'nothing answered');
    cancel(); // the server's $/cancelRequest
    await answer;
    assert.equal(settled, undefined);
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
    assert.match(req.expiresAt!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(typeof req.timeoutMs === 'number' && req.timeoutMs <= 300_000, String(req.timeoutMs));
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

describe('server: the deadline of a review', () => {
  test('a request carries expiresAt and timeoutMs; it leaves the queue at the deadline, unanswered, and the server rejects the call', async () => {
    const e = await start({ 'a.txt': 'a\n' }, {}, { approval: { timeoutSeconds: 2 } });
    const p = e.tools.callTool('edit_file', { path: 'a.txt', old_string: 'a', new_string: 'b' });
    await waitFor(() => e.queue.size === 1, 5000, 'pending approval');
    const pend = e.queue.list()[0];
    const req = pend.request;
    assert.ok(typeof req.expiresAt === 'string' && typeof req.timeoutMs === 'number', JSON.stringify(req));
    assert.ok(req.timeoutMs! <= 2000, String(req.timeoutMs));
    assert.match(timeLeft(req, pend.received), /^0:0[0-2] left \(rejected by itself at /);
    const r = await p;
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    // The server's own rejection, not an answer of the client.
    assert.match(r.content, /no answer within/);
    await waitFor(() => e.queue.size === 0, 5000, 'the review to go');
    assert.equal(fs.readFileSync(path.join(e.root, 'a.txt'), 'utf8'), 'a\n');
  });
});
