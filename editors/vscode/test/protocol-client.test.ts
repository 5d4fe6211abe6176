// The protocol with a client nobody here wrote: the node
// vscode-languageserver-protocol client (createProtocolConnection over the
// REAL agentls's stdio), first with the workspaceEdit capabilities
// vscode-languageclient declares (documentChanges, create/rename/delete,
// textOnlyTransactional, changeAnnotationSupport) and no agentls
// extension, then with none of them. Documents live in memory like an
// editor's buffers: an applied edit changes them and is reported with
// didChange; the disk is written only by a save. Nothing of the extension's
// own code (src/) is used.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createProtocolConnection, ProgressType, ProtocolConnection, StreamMessageReader, StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { agentlsBinary, fileUri, tempDir, tempWorkspace, vscodeWorkspaceEdit } from './harness';

const workspace = tempWorkspace;
const uriOf = fileUri;
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

interface Pos { line: number; character: number }
interface TextEdit { range: { start: Pos; end: Pos }; newText: string }

/** Byte-free offset of an LSP position (UTF-16, as JavaScript strings are). */
function offsetAt(text: string, p: Pos): number {
  let i = 0;
  for (let line = 0; line < p.line; line++) {
    const n = text.indexOf('\n', i);
    if (n < 0) { return text.length; }
    i = n + 1;
  }
  return Math.min(i + p.character, text.length);
}

function applyTextEdits(text: string, edits: TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start));
  for (const e of sorted) {
    text = text.slice(0, offsetAt(text, e.range.start)) + e.newText + text.slice(offsetAt(text, e.range.end));
  }
  return text;
}

/** What the editor does with a workspace/applyEdit. */
type Behaviour = 'apply' | 'decline' | 'say-applied-do-nothing' | 'apply-late-didChange';

const vscodeCaps = {
  workspace: {
    applyEdit: true,
    workspaceEdit: vscodeWorkspaceEdit,
    workspaceFolders: true,
  },
  window: { workDoneProgress: true },
};

const noEditCaps = { workspace: { applyEdit: true }, window: {} };

class Client {
  readonly conn: ProtocolConnection;
  readonly proc: ChildProcess;
  readonly docs = new Map<string, { text: string; version: number }>();
  readonly applyEdits: any[] = [];
  readonly questions: string[] = [];
  readonly diagnostics = new Map<string, any[]>();
  behaviour: Behaviour = 'apply';

  constructor(readonly root: string, config: object = {}) {
    const xdg = tempDir('agentls-protocol-xdg-');
    this.proc = spawn(agentlsBinary(), ['serve'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, XDG_CONFIG_HOME: path.join(xdg, 'config'), XDG_STATE_HOME: path.join(xdg, 'state'), XDG_RUNTIME_DIR: xdg } });
    this.conn = createProtocolConnection(new StreamMessageReader(this.proc.stdout!), new StreamMessageWriter(this.proc.stdin!));
    this.conn.onRequest('workspace/applyEdit', (p: { edit: any }) => this.applyEdit(p.edit));
    // The person approves (the fallback question of a client without agentls).
    this.conn.onRequest('window/showMessageRequest', (p: { message: string; actions: { title: string }[] }) => {
      this.questions.push(p.message);
      return p.actions.find(a => a.title === 'Approve') ?? null;
    });
    this.conn.onRequest('window/workDoneProgress/create', () => null);
    this.conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: any[] }) => { this.diagnostics.set(p.uri, p.diagnostics); });
    this.conn.onNotification('tool/event', () => { /* seen */ });
    this.conn.onNotification('window/showMessage', () => { /* seen */ });
    this.config = config;
  }

  config: object;

  async start(caps: object): Promise<void> {
    this.conn.listen();
    await this.conn.sendRequest('initialize', {
      processId: process.pid, rootUri: uriOf(this.root),
      workspaceFolders: [{ uri: uriOf(this.root), name: path.basename(this.root) }],
      capabilities: caps, initializationOptions: { config: this.config },
    });
    await this.conn.sendNotification('initialized', {});
  }

  async open(p: string, text: string): Promise<void> {
    this.docs.set(uriOf(p), { text, version: 1 });
    await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri: uriOf(p), languageId: p.endsWith('.go') ? 'go' : 'plaintext', version: 1, text } });
  }

  async change(uri: string, text: string): Promise<void> {
    const d = this.docs.get(uri)!;
    d.text = text;
    d.version++;
    await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: d.version }, contentChanges: [{ text }] });
  }

  private async applyEdit(edit: any): Promise<{ applied: boolean; failureReason?: string }> {
    this.applyEdits.push(edit);
    if (this.behaviour === 'decline') { return { applied: false }; }
    if (this.behaviour === 'say-applied-do-nothing') { return { applied: true }; }
    const next = new Map<string, string>();
    const textOf = (uri: string) => next.get(uri) ?? this.docs.get(uri)?.text ?? fs.readFileSync(fileURLToPath(uri), 'utf8');
    for (const ch of edit.documentChanges ?? []) {
      if (ch.kind === 'create') {
        fs.mkdirSync(path.dirname(fileURLToPath(ch.uri)), { recursive: true });
        fs.writeFileSync(fileURLToPath(ch.uri), '');
      } else if (ch.kind) {
        return { applied: false, failureReason: 'unexpected ' + ch.kind };
      } else {
        const d = this.docs.get(ch.textDocument.uri);
        if (d && ch.textDocument.version !== null && ch.textDocument.version !== d.version) {
          return { applied: false, failureReason: 'version mismatch' };
        }
        next.set(ch.textDocument.uri, applyTextEdits(textOf(ch.textDocument.uri), ch.edits));
      }
    }
    for (const [uri, edits] of Object.entries(edit.changes ?? {})) {
      next.set(uri, applyTextEdits(textOf(uri), edits as TextEdit[]));
    }
    const report = async () => {
      for (const [uri, text] of next) {
        if (this.docs.has(uri)) {
          await this.change(uri, text);
        } else {
          // An editor opens a file it edits (unsaved).
          this.docs.set(uri, { text, version: 1 });
          await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text } });
        }
      }
    };
    if (this.behaviour === 'apply-late-didChange') {
      setTimeout(() => { void report(); }, 700);
    } else {
      await report();
    }
    return { applied: true };
  }

  async call(name: string, args: object, extra: object = {}): Promise<any> {
    return this.conn.sendRequest('tool/call', { name, arguments: args, ...extra });
  }

  async stop(): Promise<void> {
    await this.conn.sendRequest('shutdown');
    await this.conn.sendNotification('exit');
    await new Promise(r => this.proc.once('exit', r));
    this.conn.dispose();
  }
}

/** A started Client on a workspace whose a.txt holds text, open in it. */
async function withA(caps: object, text: string): Promise<{ c: Client; a: string }> {
  const root = workspace({ 'a.txt': text });
  const c = new Client(root);
  await c.start(caps);
  const a = path.join(root, 'a.txt');
  await c.open(a, text);
  return { c, a };
}

for (const variant of ['vscode-languageclient capabilities', 'no workspaceEdit capabilities'] as const) {
  const caps = variant === 'no workspaceEdit capabilities' ? noEditCaps : vscodeCaps;

  test(`${variant}: edits land in the unsaved buffer, the disk keeps the saved text, a second edit keeps the first`, async () => {
    const { c, a } = await withA(caps, 'one\ntwo\nthree\n');
    await c.change(uriOf(a), 'one (unsaved é中😀)\ntwo\nthree\n');
    let r = await c.call('edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO 😀' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    r = await c.call('edit_file', { path: 'a.txt', old_string: 'three', new_string: 'THREE' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(c.docs.get(uriOf(a))!.text, 'one (unsaved é中😀)\nTWO 😀\nTHREE\n');
    assert.equal(fs.readFileSync(a, 'utf8'), 'one\ntwo\nthree\n', 'the disk holds the saved text');
    assert.deepEqual(r.structured.unsaved, ['a.txt']);
    assert.equal(c.applyEdits.length, 2);
    if (variant === 'no workspaceEdit capabilities') {
      assert.equal(c.applyEdits[0].documentChanges, undefined, 'no documentChanges for a client without them');
      assert.ok(c.applyEdits[0].changes[uriOf(a)], JSON.stringify(c.applyEdits[0]));
      assert.equal(c.questions.length, 2, 'asked through window/showMessageRequest');
    } else {
      assert.ok(c.applyEdits[0].changeAnnotations?.agentls?.needsConfirmation, 'the editor\'s own preview asks');
    }
    await c.stop();
  });

  test(`${variant}: an edit the editor says it applied but never did is not a success`, async () => {
    const { c, a } = await withA(caps, 'one\n');
    c.behaviour = 'say-applied-do-nothing';
    const r = await c.call('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'ONE' });
    assert.equal(r.status, 'error', JSON.stringify(r));
    assert.equal(r.error.code, 'NOT_APPLIED');
    assert.equal(r.structured.landed, 'none');
    assert.deepEqual(r.structured.not_landed, ['a.txt']);
    // A didChange that comes after the answer still counts.
    c.behaviour = 'apply-late-didChange';
    const late = await c.call('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'ONE' });
    assert.equal(late.status, 'success', JSON.stringify(late));
    assert.equal(c.docs.get(uriOf(a))!.text, 'ONE\n');
    await c.stop();
  });

  test(`${variant}: a new file lands with its content`, async () => {
    const root = workspace({ 'a.txt': 'a\n' });
    const c = new Client(root);
    await c.start(caps);
    const r = await c.call('write_file', { path: 'new/made.txt', content: 'made é\n' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    const made = path.join(root, 'new', 'made.txt');
    if (variant === 'no workspaceEdit capabilities') {
      // No create operation: the server creates it, with its content.
      assert.equal(fs.readFileSync(made, 'utf8'), 'made é\n');
      assert.equal(c.applyEdits.length, 0);
      assert.equal(r.structured.applied_by, 'server');
    } else {
      // Created by the editor; its text waits, unsaved, in the buffer.
      assert.equal(c.docs.get(uriOf(made))?.text, 'made é\n');
      assert.deepEqual(r.structured.unsaved, ['new/made.txt']);
    }
    await c.stop();
  });

  test(`${variant}: grep partial results are not repeated in the final result`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 15; i++) { files[`d/f${i}.txt`] = 'needle\nhay\nneedle\n'; }
    const c = new Client(workspace(files));
    await c.start(caps);
    const seen = new Map<string, number>();
    c.conn.onProgress(new ProgressType<{ matches?: { path: string; line: number }[] }>(), 'grep-1', v => {
      for (const m of v.matches ?? []) { const k = `${m.path}:${m.line}`; seen.set(k, (seen.get(k) ?? 0) + 1); }
    });
    const r = await c.call('grep', { pattern: 'needle', max_results: 20 }, { partialResultToken: 'grep-1' });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.deepEqual(r.structured.matches, []);
    assert.equal(r.structured.streamed, 20);
    assert.equal(r.structured.truncated, true);
    await sleep(50);
    assert.equal(seen.size, 20);
    assert.ok([...seen.values()].every(n => n === 1), 'each match streamed once');
    await c.stop();
  });

  test(`${variant}: paths of an added workspace folder round-trip`, async () => {
    const c = new Client(workspace({ 'first.txt': 'first\n' }));
    await c.start(caps);
    const second = workspace({ 'pkg/two.txt': 'second root\n' });
    await c.conn.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: [{ uri: uriOf(second), name: 'backend' }], removed: [] } });
    const g = await c.call('grep', { pattern: 'second root', path: 'backend' });
    assert.equal(g.status, 'success', JSON.stringify(g));
    assert.equal(g.structured.matches[0].path, 'backend/pkg/two.txt');
    const r = await c.call('read_file', { path: g.structured.matches[0].path });
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.match(r.content, /second root/);
    assert.equal((await c.call('read_file', { path: 'first.txt' })).status, 'success');
    await c.stop();
  });

  test(`${variant}: published diagnostics have the range of the offending code`, async () => {
    const src = 'package main\n\nfunc main() {\n\tvar s string = 1\n\t_ = s\n}\n';
    const root = workspace({ 'go.mod': 'module m\n\ngo 1.22\n', 'main.go': src });
    const c = new Client(root, { lsp: { features: ['diagnostics'] } });
    await c.start(caps);
    await c.open(path.join(root, 'main.go'), src);
    const uri = uriOf(path.join(root, 'main.go'));
    for (let i = 0; i < 300 && !(c.diagnostics.get(uri)?.length); i++) { await sleep(50); }
    const ds = c.diagnostics.get(uri) ?? [];
    assert.equal(ds.length, 1, JSON.stringify(ds));
    assert.deepEqual(ds[0].range, { start: { line: 3, character: 16 }, end: { line: 3, character: 17 } }, 'the literal 1');
    await c.stop();
  });
}

test('vscode-languageclient capabilities: a declined preview is rejected and changes nothing', async () => {
  const { c, a } = await withA(vscodeCaps, 'one\n');
  c.behaviour = 'decline';
  const r = await c.call('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'ONE' });
  assert.equal(r.status, 'rejected', JSON.stringify(r));
  assert.equal(c.docs.get(uriOf(a))!.text, 'one\n');
  assert.equal(fs.readFileSync(a, 'utf8'), 'one\n');
  await c.stop();
});
