// The tools offered to VS Code's agents (core/lmTools.ts): the
// contribution made from the registry is what package.json holds, a
// ToolResult becomes the text the model reads, and a call made as a
// language model tool goes through the session's review, named after its
// agent, against the REAL agentls binary.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  LmAgent, ToolDefinition, ToolResult, agentlsToolOf, firstSentence, formatEvent, invokeLmTool, lmResultText, lmToolContributions,
  goCodeSources, lmToolName, nextSteps, nextStepsFromGo, nextStepsModule, requester,
} from '../src/core';
import { agentlsBinary, repoRoot, startEditor, tempWorkspace, waitFor } from './harness';

const extRoot = path.join(repoRoot, 'editors', 'vscode');

describe('core: the contribution of each tool', () => {
  const defs: ToolDefinition[] = [
    { name: 'read_file', title: 'Read file', description: 'Reads a file (text only). Returns lines.', inputSchema: { type: 'object' }, annotations: { readOnly: true, approval: 'auto' } },
    { name: 'edit_file', description: 'Replaces `a.b` text.\nMore.', inputSchema: { type: 'object', required: ['path'] }, annotations: { approval: 'ask' } },
    { name: 'git_branch', title: 'Git branch', description: 'Lists branches (all: true adds more)', inputSchema: {}, annotations: { approval: 'conditional' } },
  ];
  test('named agentls_<tool>, described by the tool, tagged by what it does', () => {
    assert.deepEqual(lmToolContributions(defs), [
      {
        name: 'agentls_read_file', toolReferenceName: 'agentls_read_file', displayName: 'Read file',
        userDescription: 'Reads a file (text only).', modelDescription: defs[0].description,
        canBeReferencedInPrompt: true, tags: ['agentls', 'read-only'], inputSchema: { type: 'object' },
      },
      {
        name: 'agentls_edit_file', toolReferenceName: 'agentls_edit_file', displayName: 'edit_file',
        userDescription: 'Replaces `a.b` text.', modelDescription: defs[1].description,
        canBeReferencedInPrompt: true, tags: ['agentls', 'asks-approval'], inputSchema: { type: 'object', required: ['path'] },
      },
      {
        name: 'agentls_git_branch', toolReferenceName: 'agentls_git_branch', displayName: 'Git branch',
        userDescription: 'Lists branches (all: true adds more)', modelDescription: defs[2].description,
        canBeReferencedInPrompt: true, tags: ['agentls', 'asks-approval'], inputSchema: {},
      },
    ]);
  });

  test('names map back to the tool; other names are not agentls\'s', () => {
    const cases: Array<[string, string | undefined]> = [
      [lmToolName('grep'), 'grep'], ['agentls_', undefined], ['copilot_readFile', undefined], ['grep', undefined],
    ];
    for (const [name, want] of cases) { assert.equal(agentlsToolOf(name), want, name); }
  });

  test('first sentence: ends at a period outside parentheses and code', () => {
    const cases: Array<[string, string]> = [
      ['One. Two.', 'One.'],
      ['Reads (e.g. this. that) all. Then.', 'Reads (e.g. this. that) all.'],
      ['Runs `a. b` now. Later.', 'Runs `a. b` now.'],
      ['No period', 'No period'],
      ['Version 1.2 is here. Yes.', 'Version 1.2 is here.'],
    ];
    for (const [s, want] of cases) { assert.equal(firstSentence(s), want, s); }
  });

  test('package.json offers every tool of the registry (node gen-lm-tools.mjs)', () => {
    // As the generator runs it: an empty folder and config home.
    const empty = tempWorkspace();
    const defs = JSON.parse(execFileSync(agentlsBinary(), ['tools'], { cwd: empty, env: { ...process.env, XDG_CONFIG_HOME: empty }, encoding: 'utf8' })) as ToolDefinition[];
    assert.ok(defs.some(d => d.name === 'edit_file') && defs.some(d => d.name === 'read_file'), 'the registry has edit_file and read_file');
    const pkg = JSON.parse(fs.readFileSync(path.join(extRoot, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.contributes.languageModelTools, lmToolContributions(defs),
      'contributes.languageModelTools is out of date: run npm run compile && node gen-lm-tools.mjs in editors/vscode');
  });

  test('the next steps are those of mcp/result.go (node gen-lm-tools.mjs)', () => {
    const steps = nextStepsFromGo(goCodeSources(repoRoot).map(f => fs.readFileSync(f, 'utf8')), fs.readFileSync(path.join(repoRoot, 'mcp', 'result.go'), 'utf8'));
    assert.ok(Object.keys(steps).length >= 20 && steps.REJECTED && steps.NO_MATCH, `a table was read: ${Object.keys(steps).join(', ')}`);
    assert.equal(fs.readFileSync(path.join(extRoot, 'src', 'core', 'nextSteps.ts'), 'utf8'), nextStepsModule(steps),
      'src/core/nextSteps.ts is out of date: run npm run compile && node gen-lm-tools.mjs in editors/vscode');
    assert.deepEqual(nextSteps, steps);
  });

  test('a table the reader does not know fails loudly', () => {
    const codes = ['const (\n\tNoMatch Code = "NO_MATCH"\n)', 'const Ended tools.Code = "SESSION_ENDED"'];
    assert.deepEqual(nextStepsFromGo(codes, 'var nextStep = map[tools.Code]string{\n\ttools.NoMatch: "read \\"it\\" again.",\n\tEnded:   "wait.",\n}'),
      { NO_MATCH: 'read "it" again.', SESSION_ENDED: 'wait.' });
    assert.throws(() => nextStepsFromGo(codes, 'var nextStep = map[tools.Code]string{\n\ttools.Other: "x",\n}'), /Other is not a code/);
    assert.throws(() => nextStepsFromGo(codes, 'var nextStep = map[tools.Code]string{\n\tfoo(),\n}'), /does not know/);
    assert.throws(() => nextStepsFromGo([], ''), /no error codes/);
  });
});

describe('core: a ToolResult as the text the model reads', () => {
  const base: ToolResult = { callId: 'tc_1', tool: 'edit_file', status: 'success', content: 'edited a.txt' };
  const cases: Array<[string, ToolResult, string]> = [
    ['success: the content', base, 'edited a.txt'],
    ['success without content: the structured result', { ...base, content: '', structured: { n: 1 } }, '{"n":1}'],
    ['invalid params: code, details, next',
      { ...base, status: 'error', content: 'error: bad', error: { code: 'INVALID_PARAMS', message: 'bad', recoverable: true, details: { violations: [{ pointer: '/path', reason: 'required' }] } } },
      `INVALID_PARAMS: bad\ndetails: {"violations":[{"pointer":"/path","reason":"required"}]}\nnext: ${nextSteps.INVALID_PARAMS}`],
    ['a failed command: its own text and result, not recoverable',
      { ...base, tool: 'shell_exec', status: 'error', content: 'exit 2\nstderr: boom', structured: { exitCode: 2 }, error: { code: 'EXECUTION_ERROR', message: 'the command failed' } },
      `EXECUTION_ERROR: the command failed\nexit 2\nstderr: boom\nresult: {"exitCode":2}\nnext: ${nextSteps.EXECUTION_ERROR} This error is not recoverable by retrying.`],
    ['rejected with the person\'s message',
      { ...base, status: 'rejected', content: 'rejected by the user: use the helper', message: 'use the helper', error: { code: 'REJECTED', message: 'rejected by the user: use the helper' } },
      `REJECTED: rejected by the user: use the helper\nnext: ${nextSteps.REJECTED}`],
    ['cancelled without an error', { ...base, status: 'cancelled', content: 'cancelled' }, `CANCELLED: cancelled\nnext: ${nextSteps.CANCELLED}`],
    ['an unknown code: the general next step',
      { ...base, status: 'error', content: '', error: { code: 'NEW_CODE', message: 'odd', recoverable: true } },
      'NEW_CODE: odd\nnext: read the cause above, fix it and try again.'],
  ];
  for (const [name, r, want] of cases) {
    test(name, () => { assert.equal(lmResultText(r), want); });
  }

  test('a call that cannot be made is an INTERNAL text, not an exception', async () => {
    const api = {
      listTools: async () => [],
      callTool: async () => { throw new Error('agentls: the server is not running'); },
    };
    const text = await invokeLmTool(api, 'agentls_read_file', { path: 'a' }, LmAgent);
    assert.equal(text, `INTERNAL: agentls could not run read_file: agentls: the server is not running\nnext: ${nextSteps.INTERNAL} This error is not recoverable by retrying.`);
  });
});

describe('core: the review and the log name the agent', () => {
  test('requester: the agent and the tool, or the tool alone', () => {
    const req = { callId: 'tc_1', tool: 'edit_file', arguments: {}, risk: 'write' as const, options: ['approve', 'reject'] };
    assert.equal(requester({ ...req, agent: 'VS Code agent' }), 'VS Code agent (edit_file)');
    assert.equal(requester(req), 'edit_file');
    assert.equal(requester({ ...req, agent: '' }), 'edit_file');
  });

  test('a call event says who calls', () => {
    const at = new Date('2026-11-23T17:00:00Z');
    assert.equal(formatEvent({ callId: 'tc_1', tool: 'read_file', kind: 'call', arguments: { path: 'a' }, agent: 'VS Code agent' }, at),
      '[17:00:00] read_file tc_1 call by VS Code agent {"path":"a"}');
  });
});

describe('language model tool calls through the real server', () => {
  test('an edit asks in the review as "VS Code agent"; approved it lands, rejected the message reaches the model', async () => {
    const answers: Array<{ decision: 'approve' | 'reject'; message?: string }> = [{ decision: 'approve' }, { decision: 'reject', message: 'keep the wording' }];
    const ed = await startEditor({ 'a.txt': 'one\ntwo\n' }, {
      onApproval: (_req, key, q) => { const a = answers.shift()!; q.answer(key, a.decision, a.message); },
    });
    const ok = await invokeLmTool(ed.tools, 'agentls_edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO' }, LmAgent);
    assert.equal(ed.approvals.length, 1, 'one review');
    assert.equal(ed.approvals[0].agent, LmAgent);
    assert.equal(ed.approvals[0].tool, 'edit_file');
    assert.doesNotMatch(ok, /^[A-Z_]+: /, `a success: ${ok}`);
    await waitFor(() => fs.readFileSync(path.join(ed.root, 'a.txt'), 'utf8') === 'one\nTWO\n', 10000, 'a.txt edited on disk');

    const no = await invokeLmTool(ed.tools, 'agentls_edit_file', { path: 'a.txt', old_string: 'one', new_string: 'ONE' }, LmAgent);
    assert.match(no, /^REJECTED: .*keep the wording/);
    assert.match(no, /\nnext: the call did not run/);
    assert.equal(fs.readFileSync(path.join(ed.root, 'a.txt'), 'utf8'), 'one\nTWO\n');
    await waitFor(() => ed.events.filter(e => e.kind === 'call').length === 2, 5000, 'two call events');
    assert.deepEqual(ed.events.filter(e => e.kind === 'call').map(e => e.agent), [LmAgent, LmAgent], 'the call events name the agent');
  });

  test('a read-only tool runs without a review', async () => {
    const ed = await startEditor({ 'r.txt': 'read me\n' });
    const text = await invokeLmTool(ed.tools, 'agentls_read_file', { path: 'r.txt' }, LmAgent);
    assert.match(text, /read me/);
    assert.equal(ed.approvals.length, 0);
  });

  test('invalid arguments come back as text with the violations and the next step', async () => {
    const ed = await startEditor({});
    const text = await invokeLmTool(ed.tools, 'agentls_read_file', { path: 5 }, LmAgent);
    assert.match(text, /^INVALID_PARAMS: /);
    assert.match(text, /\ndetails: .*\/path/);
    assert.match(text, new RegExp(`\\nnext: ${nextSteps.INVALID_PARAMS.replace(/[()]/g, '\\$&')}$`));
  });
});
