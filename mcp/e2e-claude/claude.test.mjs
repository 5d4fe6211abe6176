// Claude Code end to end (run by scripts/claude-e2e.sh): the real agent
// ($CLAUDE_BIN, @anthropic-ai/claude-code from npm) in print mode
// (`claude -p`), with the real `agentls mcp` ($AGENTLS_BIN) as its only MCP
// server (--mcp-config, --strict-mcp-config), on a temporary workspace.
//
// What is faked, and only this:
//   - the model: Claude Code talks to model.mjs on 127.0.0.1
//     (ANTHROPIC_BASE_URL, a dummy ANTHROPIC_API_KEY), which answers with
//     tool_use blocks from a script and records the tool_result blocks
//     Claude Code sends back: those are what the model was shown, and what
//     the tests below assert on;
//   - the person: print mode has nobody to show an approval question to.
//     The question (MCP elicitation) goes to Claude Code's own Elicitation
//     hook, person.mjs, which answers as the test says, or gives no answer,
//     and Claude Code then cancels the question as it does without a hook.
// Everything else is real: Claude Code's MCP client, the agentls binary
// over stdio, files on disk, agentls's configuration and approval policy.
//
// One Claude Code run plays one scenario (a list of steps, one tool call
// each) and the tests check what each step did. A mode of agentls is a
// describe block with its own run: `standalone` below (no editor session:
// approvals go to Claude Code as elicitation), and `attached`: an editor's
// session (the real `agentls serve`, driven by mcp/test/editor.mjs) is
// started on the workspace first, with XDG_RUNTIME_DIR = the run's
// runtimeDir where `agentls mcp` finds it, and the questions are answered
// in that editor.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModel, FINAL_TEXT } from './model.mjs';
import { Editor } from '../test/editor.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const agentls = process.env.AGENTLS_BIN;
const claude = process.env.CLAUDE_BIN;
if (!agentls || !claude) throw new Error('AGENTLS_BIN and CLAUDE_BIN must be set (run scripts/claude-e2e.sh)');
const workBase = process.env.AGENTLS_E2E_WORK || os.tmpdir();
const RUN_TIMEOUT_MS = 100_000; // a run normally takes 10-30 s on a busy machine

// runClaude runs `claude -p` once on a fresh workspace.
//   files:      {relative path: content} of the workspace
//   steps:      the model's script (model.mjs): [[{name, input}], …]
//   answers:    the person's answers to the approval questions, in order
//   userConfig: agentls's user configuration ($XDG_CONFIG_HOME/agentls/config.json)
//   before:     async (run) => …, called before Claude Code starts
//   mcpArgs:    the arguments of agentls (default `mcp --root <root>`)
// It returns {root, model, asked, output, code, stderr, debugLog}; each of
// model.results also has `files`: the workspace's files (those of `files`)
// when the result reached the model.
async function runClaude({ files, steps, answers = [], userConfig, before: setup, mcpArgs }) {
  const run = { dir: fs.mkdtempSync(path.join(workBase, 'claude-run-')) };
  const d = (...p) => path.join(run.dir, ...p);
  for (const p of ['root', 'home', 'config', 'state', 'cache', 'data', 'runtime', 'tmp', 'person']) fs.mkdirSync(d(p), { mode: 0o700 });
  run.root = d('root');
  run.runtimeDir = d('runtime');
  // The run's TMPDIR, removed with it: Claude Code keeps a folder of its
  // own there (claude-UID) and leaves it.
  run.tmpDir = d('tmp');
  for (const [p, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(run.root, p)), { recursive: true });
    fs.writeFileSync(path.join(run.root, p), content);
  }
  if (userConfig) {
    fs.mkdirSync(d('config', 'agentls'));
    fs.writeFileSync(d('config', 'agentls', 'config.json'), JSON.stringify(userConfig));
  }
  fs.writeFileSync(d('person', 'answers.json'), JSON.stringify(answers));
  fs.writeFileSync(d('mcp.json'), JSON.stringify({
    mcpServers: { agentls: { type: 'stdio', command: agentls, args: mcpArgs || ['mcp', '--root', run.root] } },
  }));
  fs.writeFileSync(d('settings.json'), JSON.stringify({
    hooks: {
      Elicitation: [{
        matcher: 'agentls',
        hooks: [{ type: 'command', command: [process.execPath, path.join(here, 'person.mjs'), d('person')].map(shellQuote).join(' ') }],
      }],
    },
  }));
  if (setup) await setup(run);

  run.model = await startModel(steps, (r) => {
    r.files = {};
    for (const p of Object.keys(files)) {
      try { r.files[p] = fs.readFileSync(path.join(run.root, p), 'utf8'); } catch { r.files[p] = null; }
    }
  });
  // A clean environment: nothing of the machine's user reaches Claude Code
  // or agentls (configuration, credentials, editor sessions).
  const env = {
    PATH: process.env.PATH,
    HOME: d('home'),
    XDG_CONFIG_HOME: d('config'),
    XDG_STATE_HOME: d('state'),
    XDG_CACHE_HOME: d('cache'),
    XDG_DATA_HOME: d('data'),
    XDG_RUNTIME_DIR: run.runtimeDir,
    TMPDIR: run.tmpDir,
    ANTHROPIC_BASE_URL: run.model.url,
    ANTHROPIC_API_KEY: 'sk-ant-e2e-dummy',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Every tool's definition in the first request, as the script calls
    // them directly (by default Claude Code defers MCP tools behind its
    // ToolSearch tool when there are many).
    ENABLE_TOOL_SEARCH: 'false',
  };
  run.debugLog = d('claude-debug.log');
  const args = [
    '-p', 'Work through the steps.',
    '--output-format', 'json',
    '--mcp-config', d('mcp.json'), '--strict-mcp-config',
    '--settings', d('settings.json'),
    // Claude Code's own permission check lets agentls's tools through:
    // agentls decides what needs the person.
    '--allowedTools', 'mcp__agentls__*',
    '--no-session-persistence',
    '--debug-file', run.debugLog,
  ];
  const child = spawn(claude, args, { cwd: run.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  run.stderr = '';
  child.stdout.on('data', (c) => { stdout += c; });
  child.stderr.on('data', (c) => { run.stderr += c; });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  run.code = await new Promise((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
  clearTimeout(timer);
  await run.model.close();
  try { run.output = JSON.parse(stdout); } catch { run.output = { unparsed: stdout }; }
  const asked = fs.existsSync(d('person', 'asked.jsonl')) ? fs.readFileSync(d('person', 'asked.jsonl'), 'utf8') : '';
  run.asked = asked.trim() ? asked.trim().split('\n').map((l) => JSON.parse(l)) : [];
  return run;
}

function shellQuote(s) { return `'${s.replaceAll("'", `'\\''`)}'`; }

// diagnose is what a failed assertion prints about the run.
function diagnose(run) {
  let log = '';
  try { log = fs.readFileSync(run.debugLog, 'utf8').split('\n').slice(-40).join('\n'); } catch { /* none */ }
  return `exit ${run.code}; output ${JSON.stringify(run.output).slice(0, 800)}\nstderr: ${run.stderr.slice(-2000)}\n` +
    `model errors: ${run.model.errors.join('\n')}\nother endpoints: ${run.model.unknown.join(', ')}\n` +
    `results: ${JSON.stringify([...run.model.results.values()], null, 1).slice(0, 4000)}\nClaude Code debug log (end):\n${log}`;
}

// result is what the model was shown for the call of step n.
function result(run, n) {
  const r = [...run.model.results.values()].find((x) => x.step === n);
  assert.ok(r, `the model never got the result of step ${n}\n${diagnose(run)}`);
  return r;
}

// assertRejected checks that the call of step n did not run and that the
// model read so: an isError result whose first line is firstLine and whose
// last says what to do; a.txt unchanged then. It returns the result.
function assertRejected(run, n, firstLine) {
  const r = result(run, n);
  assert.equal(r.isError, true, r.text);
  assert.equal(r.text.split('\n')[0], firstLine, r.text);
  assert.match(r.text, /\nnext: the call did not run\. Do not retry it unchanged/);
  assert.equal(r.files['a.txt'], 'one\ntwo\n', 'the rejected edit landed');
  return r;
}

// assertRanToEnd checks that Claude Code ran the whole script, the model
// answering every request and getting the results of its steps, and ended
// with the script's last answer.
function assertRanToEnd(run, steps) {
  assert.equal(run.code, 0, diagnose(run));
  assert.equal(run.output.is_error, false, diagnose(run));
  assert.equal(run.output.result, FINAL_TEXT, diagnose(run));
  assert.deepEqual(run.model.errors, []);
  assert.equal(run.model.results.size, steps, diagnose(run));
}

const editA = { name: 'edit_file', input: { path: 'a.txt', old_string: 'two', new_string: 'deux' } };

describe('standalone: Claude Code starts `agentls mcp --root`, approvals go to Claude Code', () => {
  let run;
  const read = (p) => fs.readFileSync(path.join(run.root, p), 'utf8');
  before(async () => {
    run = await runClaude({
      files: { 'a.txt': 'one\ntwo\n', 'notes.md': '# Notes\nThe secret word is marmalade.\n' },
      // A user rule lets write_file run without asking (docs/protocol.md
      // "Approval": approval.tools).
      userConfig: { approval: { tools: { write_file: 'auto' } } },
      steps: [
        [{ name: 'read_file', input: { path: 'notes.md' } }], // 0
        [editA], // 1: no answer: Claude Code cancels the question
        [editA], // 2: declined
        [editA], // 3: rejected with a message
        [editA], // 4: approved
        [{ name: 'write_file', input: { path: 'new.txt', content: 'made by the agent\n' } }], // 5: allowed by the rule
      ],
      answers: [
        null,
        { action: 'decline' },
        { action: 'accept', content: { decision: 'reject', message: 'write DEUX in capitals' } },
        { action: 'accept', content: { decision: 'approve' } },
      ],
    });
  });
  after(() => {
    if (!process.env.AGENTLS_E2E_KEEP && run) fs.rmSync(run.dir, { recursive: true, force: true });
  });

  test('Claude Code ran the whole script and ended', () => assertRanToEnd(run, 6));

  test("the model was given agentls's tools, with their schemas", () => {
    const byName = Object.fromEntries((run.model.toolsSeen || []).map((t) => [t.name, t]));
    for (const name of ['read_file', 'edit_file', 'write_file', 'grep', 'shell_exec']) {
      const t = byName[`mcp__agentls__${name}`];
      assert.ok(t, `mcp__agentls__${name} was not offered to the model: ${Object.keys(byName).join(', ')}`);
      assert.ok(t.description.length > 20, `${name}: description ${t.description}`);
      assert.equal(t.input_schema.type, 'object');
    }
    assert.deepEqual(byName.mcp__agentls__read_file.input_schema.required, ['path']);
  });

  test("a read's text reaches the model", () => {
    const r = result(run, 0);
    assert.equal(r.isError, false, r.text);
    // Claude Code shows the model structuredContent when there is one: the
    // text must be in it (mcp/result.go, TextKey).
    assert.match(r.text, /The secret word is marmalade\./, `the file's lines are not in what the model read:\n${r.text}`);
    assert.match(r.text, /2\\tThe secret word/, 'numbered like cat -n');
    assert.match(r.text, /"path":"notes\.md"/, 'the structured result too');
  });

  test('an edit with no answer: the model reads that nobody answered, nothing changed', () => {
    const r = assertRejected(run, 1, 'REJECTED: approval failed: Claude Code dismissed the approval question without an answer; nobody approved or rejected the call');
    assert.doesNotMatch(r.text, /by the user|declined/, 'no person rejected it');
  });

  test('the person saw the edit: who, what, the diff, the choices', () => {
    assert.equal(run.asked.length, 4, `questions asked: ${JSON.stringify(run.asked, null, 1)}`);
    const q = run.asked[0];
    assert.equal(q.mcp_server_name, 'agentls');
    assert.match(q.message, /^Claude Code wants to edit a\.txt \(edit_file\) \(risk: write\)\./);
    assert.match(q.message, /\n-two\n\+deux\n/);
    assert.deepEqual(q.requested_schema.properties.decision.enum, ['approve', 'reject', 'always']);
    assert.deepEqual(q.requested_schema.required, ['decision']);
  });

  test("a decline reaches the model as the person's rejection", () => {
    assertRejected(run, 2, 'REJECTED: rejected by the user: declined in Claude Code');
  });

  test("a rejection's message reaches the model", () => {
    assertRejected(run, 3, 'REJECTED: rejected by the user: write DEUX in capitals');
  });

  test('an approved edit lands, and only it', () => {
    const r = result(run, 4);
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /"landed":"all"/);
    assert.match(r.text, /Applied to a\.txt/, 'the text reaches the model too');
    assert.equal(r.files['a.txt'], 'one\ndeux\n');
    assert.equal(read('a.txt'), 'one\ndeux\n');
  });

  test('a write allowed by a rule lands without a question', () => {
    const r = result(run, 5);
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /"landed_files":\["new\.txt"\]/);
    assert.equal(r.files['a.txt'], 'one\ndeux\n');
    assert.equal(read('new.txt'), 'made by the agent\n');
    assert.equal(run.asked.length, 4, 'write_file asked the person');
  });
});

describe('attached: Claude Code starts `agentls mcp` in the workspace, approvals go to the editor', () => {
  let run;
  let editor;
  const read = (p) => fs.readFileSync(path.join(run.root, p), 'utf8');
  const rejection = 'not in French: keep the numbers in English';
  before(async () => {
    run = await runClaude({
      files: { 'a.txt': 'one\ntwo\n' },
      steps: [
        [editA], // 0: approved in the editor
        [{ name: 'edit_file', input: { path: 'a.txt', old_string: 'one', new_string: 'un' } }], // 1: rejected with a message
      ],
      // No flag: `agentls mcp` finds the editor's session on its folder.
      mcpArgs: ['mcp'],
      before: async (r) => {
        const env = {
          PATH: process.env.PATH,
          HOME: path.join(r.dir, 'home'),
          XDG_CONFIG_HOME: path.join(r.dir, 'config'),
          XDG_STATE_HOME: path.join(r.dir, 'state'),
          XDG_RUNTIME_DIR: r.runtimeDir,
          TMPDIR: r.tmpDir,
        };
        editor = new Editor(agentls, r.root, env, (req) =>
          req.arguments?.new_string === 'un' ? { decision: 'reject', message: rejection } : { decision: 'approve' });
        await editor.initialize(r.root); // the session is published before the answer
      },
    });
  });
  after(async () => {
    if (editor) await editor.end().catch(() => {});
    if (!process.env.AGENTLS_E2E_KEEP && run) fs.rmSync(run.dir, { recursive: true, force: true });
  });

  test('Claude Code ran the whole script and ended', () => assertRanToEnd(run, 2));

  test('the editor reviewed both edits, asked for by Claude Code; Claude Code asked nobody', () => {
    assert.equal(editor.approvals.length, 2, `approval requests: ${JSON.stringify(editor.approvals, null, 1)}\n${diagnose(run)}`);
    for (const a of editor.approvals) {
      assert.equal(a.agent, 'Claude Code');
      assert.equal(a.tool, 'edit_file');
    }
    assert.equal(editor.approvals[0].arguments.new_string, 'deux');
    assert.equal(run.asked.length, 0, 'Claude Code asked its own question');
    assert.ok(editor.events.some((e) => e.tool === 'edit_file'), 'the editor saw the calls');
  });

  test('the edit approved in the editor lands', () => {
    const r = result(run, 0);
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /Applied to a\.txt/);
    assert.equal(r.files['a.txt'], 'one\ndeux\n');
  });

  test("the editor's rejection and its message reach the model as the tool result", () => {
    const r = result(run, 1);
    assert.equal(r.isError, true, r.text);
    assert.match(r.text.split('\n')[0], /^REJECTED: /, r.text);
    assert.ok(r.text.includes(rejection), `the message is not in what the model read:\n${r.text}`);
    assert.equal(r.files['a.txt'], 'one\ndeux\n', 'the rejected edit landed');
    assert.equal(read('a.txt'), 'one\ndeux\n');
  });
});
