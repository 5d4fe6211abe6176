// A VS Code stand-in for the node:test suite: it spawns the REAL agentls
// binary over stdio, speaks to it through vscode-languageserver-protocol's
// node connection with the capabilities vscode-languageclient declares, and
// uses the extension's core module (ToolsClient, ApprovalQueue, SavePlan…)
// exactly as the extension does. Documents live in memory, like VS Code
// buffers: edits land there and are saved to disk when save-after-apply
// says so.
import { after } from 'node:test';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import {
  createMessageConnection, MessageConnection, ProgressType, StreamMessageReader, StreamMessageWriter, WorkDoneProgress,
} from 'vscode-languageserver-protocol/node';
import {
  ApprovalQueue, ApprovalRequest, ApprovalResponse, LspWorkspaceEdit, Methods, SavePlan, ToolEvent, ToolsClient,
  WorkDoneProgressValue, touchedUris,
} from '../src/core';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

let builtBinary: string | undefined;

/** The agentls binary: $AGENTLS_BIN, or built once from the repository. */
export function agentlsBinary(): string {
  if (process.env.AGENTLS_BIN) { return process.env.AGENTLS_BIN; }
  if (builtBinary) { return builtBinary; }
  const out = path.join(repoRoot, 'editors', 'vscode', 'out', 'test-bin', 'agentls');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  execFileSync('go', ['build', '-o', out, './cmd/agentls'], { cwd: repoRoot, stdio: 'inherit' });
  builtBinary = out;
  return out;
}

const made: string[] = [];

/**
 * A new folder in os.tmpdir() (TMPDIR), its real path; removed after the
 * file's tests, once every editor startEditor started is closed.
 */
export function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** A workspace (tempDir) holding files (relative path → text). */
export function tempWorkspace(files: Record<string, string> = {}): string {
  const dir = tempDir('agentls-vscode-test-');
  for (const [name, text] of Object.entries(files)) {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  }
  return dir;
}

export const fileUri = (p: string) => pathToFileURL(p).toString();

/** The workspaceEdit client capabilities vscode-languageclient 9 declares. */
export const vscodeWorkspaceEdit = {
  documentChanges: true, resourceOperations: ['create', 'rename', 'delete'],
  failureHandling: 'textOnlyTransactional', normalizesLineEndings: true,
  changeAnnotationSupport: { groupsOnLabel: true },
};

interface Doc { uri: string; text: string; version: number; dirty: boolean }

interface Pos { line: number; character: number }

function offsetAt(text: string, p: Pos): number {
  let line = 0, i = 0;
  while (line < p.line && i <= text.length) {
    const n = text.indexOf('\n', i);
    if (n < 0) { return text.length; }
    i = n + 1;
    line++;
  }
  return Math.min(i + p.character, text.length);
}

export interface FakeEditorOptions {
  nativePreview?: boolean;
  saveAfterApply?: boolean;
  /** Answers approval requests; default: leave them pending in the queue. */
  onApproval?: (req: ApprovalRequest, key: string, queue: ApprovalQueue) => void;
  /** Answers annotated (needsConfirmation) edits: the Refactor Preview's Apply or Discard. */
  confirmEdit?: (edit: LspWorkspaceEdit) => boolean;
}

export class FakeEditor {
  readonly conn: MessageConnection;
  readonly proc: ChildProcess;
  readonly queue = new ApprovalQueue();
  readonly tools: ToolsClient;
  readonly docs = new Map<string, Doc>();
  readonly events: ToolEvent[] = [];
  readonly approvals: ApprovalRequest[] = [];
  readonly applyEdits: LspWorkspaceEdit[] = [];
  readonly messages: Array<{ type: number; message: string }> = [];
  readonly progress: Array<{ token: string | number; value: WorkDoneProgressValue }> = [];
  readonly saved: string[] = [];
  stderr = '';
  initializeResult: any;

  constructor(readonly root: string, readonly opts: FakeEditorOptions = {}) {
    // The session is published in a runtime directory of the editor's own
    // (without one, the server would keep it in TMPDIR/agentls-UID).
    this.proc = spawn(agentlsBinary(), ['serve'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, XDG_CONFIG_HOME: path.join(root, '.xdg-config'), XDG_STATE_HOME: path.join(root, '.xdg-state'), XDG_RUNTIME_DIR: tempDir('agentls-vscode-run-') } });
    this.proc.stderr!.on('data', d => { this.stderr += d; });
    this.conn = createMessageConnection(new StreamMessageReader(this.proc.stdout!), new StreamMessageWriter(this.proc.stdin!));
    this.tools = new ToolsClient(() => this.conn as any, (token, handler, kind) =>
      kind === 'workDone'
        ? this.conn.onProgress(WorkDoneProgress.type, token, v => {
          this.progress.push({ token, value: v as WorkDoneProgressValue });
          handler(v);
        })
        : this.conn.onProgress(new ProgressType<unknown>(), token, v => handler(v)));
    this.conn.onRequest(Methods.approvalRequest, (req: ApprovalRequest, token) => {
      this.approvals.push(req);
      const { key, answer } = this.queue.add(req, token);
      this.opts.onApproval?.(req, key, this.queue);
      return answer.then(r => r ?? ({ decision: 'reject', message: 'withdrawn' } as ApprovalResponse));
    });
    this.conn.onRequest('workspace/applyEdit', (p: { label?: string; edit: LspWorkspaceEdit }) => this.applyEdit(p.edit));
    this.conn.onNotification(Methods.toolEvent, (e: ToolEvent) => { this.events.push(e); if (e.kind === 'result') { this.queue.drop(e.callId); } });
    this.conn.onNotification('window/showMessage', (m: { type: number; message: string }) => { this.messages.push(m); });
    this.conn.onNotification('window/logMessage', () => { /* ignored */ });
    this.conn.onRequest('window/workDoneProgress/create', () => null);
    this.conn.onRequest('window/showMessageRequest', () => null);
    this.conn.listen();
  }

  async initialize(extra: { config?: unknown } = {}): Promise<any> {
    this.initializeResult = await this.conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'Visual Studio Code (agentls test stand-in)', version: '1.100.3' },
      rootUri: fileUri(this.root),
      workspaceFolders: [{ uri: fileUri(this.root), name: path.basename(this.root) }],
      capabilities: {
        workspace: {
          applyEdit: true,
          workspaceEdit: vscodeWorkspaceEdit,
          didChangeConfiguration: { dynamicRegistration: true },
          workspaceFolders: true,
          configuration: true,
        },
        window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } }, showDocument: { support: true } },
        textDocument: { synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true } },
        experimental: {
          agentls: { approvalRequest: true, saveAfterApply: this.opts.saveAfterApply ?? true, nativePreview: this.opts.nativePreview ?? false },
        },
      },
      initializationOptions: { config: extra.config ?? {} },
    });
    await this.conn.sendNotification('initialized', {});
    return this.initializeResult;
  }

  /** Opens a document (as VS Code does when a file is opened in an editor). */
  async open(rel: string, text?: string): Promise<string> {
    const p = path.join(this.root, rel);
    const uri = fileUri(p);
    const t = text ?? fs.readFileSync(p, 'utf8');
    const d: Doc = { uri, text: t, version: 1, dirty: text !== undefined && (!fs.existsSync(p) || fs.readFileSync(p, 'utf8') !== t) };
    this.docs.set(uri, d);
    await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text: t } });
    return uri;
  }

  /** Types into a document: the whole text is replaced, the buffer becomes dirty. */
  async type(uri: string, text: string): Promise<void> {
    const d = this.docs.get(uri)!;
    const end = { line: d.text.split('\n').length - 1, character: d.text.length - d.text.lastIndexOf('\n') - 1 };
    d.text = text;
    d.version++;
    d.dirty = true;
    await this.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: d.version },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end }, text }],
    });
  }

  async save(uri: string): Promise<void> {
    const d = this.docs.get(uri)!;
    fs.writeFileSync(fileURLToPath(uri), d.text);
    d.dirty = false;
    this.saved.push(uri);
    await this.conn.sendNotification('textDocument/didSave', { textDocument: { uri } });
  }

  /**
   * workspace/applyEdit as VS Code and the extension apply it (extension.ts
   * applyEdit). A stand-in: VS Code cannot run in these node tests, so this
   * is a small editor of its own; what the two share (SavePlan, touchedUris)
   * is core's, and the e2e suite (e2e/vscode.e2e.test.mjs) runs the
   * extension's own applyEdit in real VS Code.
   */
  private async applyEdit(edit: LspWorkspaceEdit): Promise<{ applied: boolean; failureReason?: string }> {
    this.applyEdits.push(edit);
    const confirm = Object.values(edit.changeAnnotations ?? {}).some(a => a.needsConfirmation);
    if (confirm && !(this.opts.confirmEdit?.(edit) ?? false)) {
      return { applied: false };
    }
    const plan = new SavePlan(touchedUris(edit), u => this.docs.get(u)?.dirty);
    for (const c of edit.documentChanges ?? []) {
      if ('textDocument' in c) {
        let d = this.docs.get(c.textDocument.uri);
        if (!d) {
          // VS Code opens a buffer for a file an edit touches.
          const p = fileURLToPath(c.textDocument.uri);
          await this.open(path.relative(this.root, p), fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : '');
          d = this.docs.get(c.textDocument.uri)!;
        } else if (typeof c.textDocument.version === 'number' && c.textDocument.version !== d.version) {
          return { applied: false, failureReason: 'version mismatch' };
        }
        // Apply from the end so earlier offsets stay valid.
        const edits = [...(c.edits as Array<{ range: { start: Pos; end: Pos }; newText: string }>)]
          .sort((a, b) => offsetAt(d!.text, b.range.start) - offsetAt(d!.text, a.range.start));
        const changes = [];
        for (const e of edits) {
          const s = offsetAt(d.text, e.range.start), en = offsetAt(d.text, e.range.end);
          d.text = d.text.slice(0, s) + e.newText + d.text.slice(en);
          changes.push({ range: e.range, text: e.newText });
        }
        d.version++;
        d.dirty = true;
        await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri: d.uri, version: d.version }, contentChanges: changes });
      } else if (c.kind === 'create') {
        const p = fileURLToPath(c.uri);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        if (!fs.existsSync(p)) { fs.writeFileSync(p, ''); }
      } else if (c.kind === 'delete') {
        fs.rmSync(fileURLToPath(c.uri), { recursive: true, force: true });
        this.docs.delete(c.uri);
      } else if (c.kind === 'rename') {
        fs.renameSync(fileURLToPath(c.oldUri), fileURLToPath(c.newUri));
      }
    }
    if (this.opts.saveAfterApply ?? true) {
      for (const u of plan.toSave()) {
        if (this.docs.get(u)?.dirty) { await this.save(u); }
      }
    }
    return { applied: true };
  }

  text(uri: string): string | undefined { return this.docs.get(uri)?.text; }

  async close(): Promise<void> {
    try {
      await Promise.race([this.conn.sendRequest('shutdown'), new Promise(r => setTimeout(r, 3000))]);
      await this.conn.sendNotification('exit');
    } catch { /* the server may be gone */ }
    await new Promise<void>(resolve => {
      if (this.proc.exitCode !== null) { resolve(); return; }
      const t = setTimeout(() => { this.proc.kill('SIGKILL'); resolve(); }, 3000);
      this.proc.on('exit', () => { clearTimeout(t); resolve(); });
    });
    this.conn.dispose();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** Waits until cond() holds (polling), or fails after ms. */
export async function waitFor<T>(cond: () => T | undefined | false, ms = 5000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = cond();
    if (v) { return v; }
    if (Date.now() > end) { throw new Error(`timed out waiting for ${what}`); }
    await new Promise(r => setTimeout(r, 20));
  }
}

const started: FakeEditor[] = [];
after(async () => {
  await Promise.all(started.map(e => e.close()));
  for (const d of made) { fs.rmSync(d, { recursive: true, force: true }); }
});

/** A FakeEditor on a new workspace with files, initialized with config; closed after the file's tests. */
export async function startEditor(files: Record<string, string>, opts: FakeEditorOptions = {}, config?: unknown): Promise<FakeEditor> {
  const e = new FakeEditor(tempWorkspace(files), opts);
  started.push(e);
  await e.initialize({ config });
  return e;
}

export { repoRoot };
