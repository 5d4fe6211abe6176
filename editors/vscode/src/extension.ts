// The VS Code side of the agentls extension: the language client, the
// approval UI (diff view, CodeLens, editor title buttons, notifications),
// the output channel, the status bar item, the commands, the public API and
// the language model tools offered to VS Code's own agents. Everything that
// is not UI lives in core/ and is tested in plain node.
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, LanguageClient, LanguageClientOptions, ServerOptions,
  State, StaticFeature, WorkDoneProgress, FeatureState, ProgressType,
} from 'vscode-languageclient/node';
import {
  AgentlsApi, AgentlsClientCapabilities, ApprovalQueue, CancellationTokenLike, Rpc, ApprovalRequest, ApprovalResponse, CallOptions,
  Decision, LspWorkspaceEdit, Methods, Proposal, ProposalScheme, ProgressPrinter, SavePlan, ToolDefinition,
  ToolEvent, ToolFormat, ToolResult, ToolsClient, WorkDoneProgressValue, argumentsTemplate, buildProposal,
  describeArguments, describeRequest, diffStat, formatEvent, formatResult, isAgentlsToken, missingServerMessage,
  parseArguments, parseProposalUri, proposalUriParts, proposalText, requestTarget, resolveServer, schemaErrors,
  renamedFrom, serverConfig, sortTools, statusText, summarizeResult, touchedUris,
  alwaysButton, describeRules, describeWaiting, offers, timeLeft, whoAsks, requester, soonestLeft, PendingApproval,
  LmAgent, LmToolContribution, agentlsToolOf, invokeLmTool,
} from './core';

const ResultScheme = 'agentls-result';
const partialResultType = new ProgressType<unknown>();

let ext: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<AgentlsApi> {
  ext = new Extension(context);
  context.subscriptions.push(ext);
  void ext.start();
  return ext.api;
}

export async function deactivate(): Promise<void> {
  await ext?.stopClient();
  ext = undefined;
}

/** Whether "always" may be answered: exactly when the request offers it (never for a dangerous call). */
function alwaysOffered(req: ApprovalRequest): boolean {
  return offers(req, 'always');
}

/**
 * The client as the tools client's Rpc, through LanguageClient.sendRequest;
 * a token goes along only when there is one (an explicit undefined would be
 * sent as a second positional parameter).
 */
function asRpc(client: LanguageClient): Rpc {
  return {
    sendRequest: (method: string, params: unknown, token?: CancellationTokenLike) => token
      ? client.sendRequest(method, params, token as vscode.CancellationToken)
      : client.sendRequest(method, params),
  };
}

/** The title of a multi-file proposal's diff (VS Code appends "(N files)"). */
function multiTitle(p: Proposal): string {
  const stat = diffStat(p.unifiedDiff);
  return `${p.tool}: agent proposal${p.unifiedDiff ? ` (+${stat.added} −${stat.removed})` : ''} ${p.callId}`;
}

class Extension implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel('Agent Tools');
  readonly queue = new ApprovalQueue();
  private readonly proposals = new Map<string, Proposal>();
  private readonly results = new Map<string, string>();
  private readonly proposalChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly lensChanged = new vscode.EventEmitter<void>();
  private readonly status: vscode.StatusBarItem;
  private readonly printers = new Map<string, ProgressPrinter>();
  private readonly disposables: vscode.Disposable[] = [];
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private startError: string | undefined;
  private resultSeq = 0;

  readonly tools = new ToolsClient(
    () => {
      if (!this.client || this.client.state !== State.Running) { throw new Error(this.startError ?? 'agentls: the server is not running'); }
      return asRpc(this.client);
    },
    (token, handler, kind) => {
      if (!this.client) { return { dispose() {} }; }
      return kind === 'workDone'
        ? this.client.onProgress(WorkDoneProgress.type, token, v => handler(v))
        : this.client.onProgress(partialResultType, token, v => handler(v));
    },
  );

  readonly api: AgentlsApi = {
    listTools: async (options?: { format?: ToolFormat; agent?: string }) => {
      await this.ready();
      return this.tools.listTools(options);
    },
    callTool: async (name: string, args?: Record<string, unknown>, options?: CallOptions) => {
      await this.ready();
      return this.tools.callTool(name, args ?? {}, options);
    },
  };

  constructor(private readonly context: vscode.ExtensionContext) {
    this.status = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 0);
    this.status.name = 'Agent Tools';
    this.status.command = 'agentls.approvals.show';
    this.updateStatus();
    this.status.show();

    const d = this.disposables;
    d.push(this.output, this.status, this.proposalChanged, this.lensChanged);
    d.push(this.queue.onDidChange(() => { this.updateStatus(); this.lensChanged.fire(); }));
    d.push(this.queue.onDidExpire((p, key) => { void this.expired(p, key); }));
    // The time left counts down in the status bar (and the diff's CodeLens)
    // while calls wait.
    const tick = setInterval(() => {
      if (this.queue.size > 0) { this.updateStatus(); this.lensChanged.fire(); }
    }, 1000);
    d.push({ dispose: () => clearInterval(tick) });
    d.push(vscode.workspace.registerTextDocumentContentProvider(ProposalScheme, {
      onDidChange: this.proposalChanged.event,
      provideTextDocumentContent: uri => this.proposalContent(uri),
    }));
    d.push(vscode.workspace.registerTextDocumentContentProvider(ResultScheme, {
      provideTextDocumentContent: uri => this.results.get(uri.path) ?? '',
    }));
    d.push(vscode.languages.registerCodeLensProvider({ scheme: ProposalScheme }, {
      onDidChangeCodeLenses: this.lensChanged.event,
      provideCodeLenses: doc => this.codeLenses(doc),
    }));
    d.push(
      vscode.commands.registerCommand('agentls.runTool', () => this.runTool()),
      vscode.commands.registerCommand('agentls.showOutput', () => this.output.show(true)),
      vscode.commands.registerCommand('agentls.restart', () => this.restart()),
      vscode.commands.registerCommand('agentls.approvals.show', () => this.showPending()),
      vscode.commands.registerCommand('agentls.rules.show', () => this.showRules()),
      vscode.commands.registerCommand('agentls.approval.approve', (key?: string) => this.decide(key, 'approve')),
      vscode.commands.registerCommand('agentls.approval.reject', (key?: string) => this.decide(key, 'reject')),
      vscode.commands.registerCommand('agentls.approval.always', (key?: string) => this.decide(key, 'always')),
    );
    d.push(vscode.workspace.onDidChangeConfiguration(e => this.configChanged(e)));
    this.registerLmTools();
  }

  dispose(): void {
    this.queue.clear();
    for (const x of this.disposables) { x.dispose(); }
  }

  // ---- the language client ----

  private settings(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('agentls');
  }

  private capabilities(): AgentlsClientCapabilities {
    return { approvalRequest: true, saveAfterApply: true, nativePreview: this.settings().get<boolean>('approval.nativePreview', false) };
  }

  /** The server configuration the person set in VS Code settings (only explicit values). */
  private serverSettings(): Record<string, unknown> {
    const props = (this.context.extension.packageJSON?.contributes?.configuration?.properties ?? {}) as Record<string, unknown>;
    const cfg = this.settings();
    const explicit: Array<[string, unknown]> = [];
    for (const full of Object.keys(props)) {
      const key = full.replace(/^agentls\./, '');
      const i = cfg.inspect(key);
      const v = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
      if (v !== undefined) { explicit.push([key, v]); }
    }
    return serverConfig(explicit);
  }

  async start(): Promise<LanguageClient | undefined> {
    if (!this.starting) { this.starting = this.doStart(); }
    return this.starting;
  }

  private async ready(): Promise<LanguageClient> {
    const c = await this.start();
    if (!c) { throw new Error(this.startError ?? 'agentls: the server is not running'); }
    return c;
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    if (!vscode.workspace.workspaceFolders?.length) {
      // Tools resolve paths against the workspace: without a folder there is none.
      this.startError = 'agentls: open a folder to use the agent tools (they work inside the workspace folders).';
      this.output.appendLine(this.startError);
      this.updateStatus();
      const sub = vscode.workspace.onDidChangeWorkspaceFolders(() => {
        sub.dispose();
        this.starting = undefined;
        void this.start();
      });
      this.disposables.push(sub);
      return undefined;
    }
    const setting = this.settings().get<string>('server.path', 'agentls');
    const base = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const command = resolveServer(setting, process.env.PATH, base);
    if (!command) {
      this.startError = missingServerMessage(setting);
      this.output.appendLine(this.startError);
      void vscode.window.showErrorMessage(this.startError, 'Open Settings').then(a => {
        if (a) { void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.server.path'); }
      });
      this.updateStatus();
      return undefined;
    }
    const args = ['serve', ...this.settings().get<string[]>('server.args', [])];
    // No transport: stdio without the --stdio flag TransportKind.stdio would add.
    const serverOptions: ServerOptions = { command, args, options: { cwd: base } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: {
        config: this.serverSettings(),
        agent: this.settings().get<string>('agent') || undefined,
        clientCapabilities: this.capabilities(),
      },
      middleware: {
        // Streamed output of the calls this extension started: every
        // workDoneToken registered through client.onProgress comes here.
        handleWorkDoneProgress: (token, params, next) => {
          if (isAgentlsToken(token)) { this.printProgress(token, params as WorkDoneProgressValue); }
          next(token, params);
        },
      },
    };
    const client = new LanguageClient('agentls', 'agentls (server)', serverOptions, clientOptions);
    const caps = this.capabilities();
    const feature: StaticFeature = {
      fillClientCapabilities: c => {
        c.experimental = { ...(c.experimental as object ?? {}), agentls: caps };
      },
      initialize: () => { /* nothing to set up */ },
      getState: (): FeatureState => ({ kind: 'static' }),
      clear: () => { /* nothing to free */ },
    };
    client.registerFeature(feature);
    client.onRequest(Methods.approvalRequest, (p: ApprovalRequest, token: vscode.CancellationToken) => this.approval(p, token));
    client.onRequest('workspace/applyEdit', (p: ApplyWorkspaceEditParams) => this.applyEdit(client, p));
    client.onNotification(Methods.toolEvent, (e: ToolEvent) => this.toolEvent(e));
    this.output.appendLine(`agentls: starting ${command} ${args.join(' ')} (native preview: ${caps.nativePreview})`);
    try {
      await client.start();
    } catch (err) {
      this.startError = `agentls: the server failed to start: ${(err as Error).message}`;
      this.output.appendLine(this.startError);
      void vscode.window.showErrorMessage(this.startError);
      return undefined;
    }
    this.client = client;
    this.startError = undefined;
    const info = client.initializeResult?.serverInfo;
    const n = (client.initializeResult?.capabilities.experimental as { agentls?: { tools?: number } } | undefined)?.agentls?.tools;
    this.output.appendLine(`agentls: connected to ${info?.name ?? 'server'} ${info?.version ?? ''} (${n ?? '?'} tools)`);
    this.updateStatus();
    return client;
  }

  async stopClient(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.starting = undefined;
    this.queue.clear();
    if (c) {
      try { await c.stop(2000); } catch { /* it is going away anyway */ }
    }
  }

  private async restart(): Promise<void> {
    await this.stopClient();
    await this.start();
  }

  private configChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('agentls')) { return; }
    const restartKeys = ['agentls.server.path', 'agentls.server.args', 'agentls.approval.nativePreview', 'agentls.agent'];
    if (restartKeys.some(k => e.affectsConfiguration(k))) {
      this.output.appendLine('agentls: settings changed, restarting the server');
      void this.restart();
      return;
    }
    const c = this.client;
    if (c) {
      void c.sendNotification('workspace/didChangeConfiguration', { settings: { agentls: this.serverSettings() } });
    }
  }

  // ---- the tools for VS Code's agents ----

  /** The agent a language model tool call runs as: the agentls.agent setting, else "VS Code agent". */
  private lmAgent(): string {
    return this.settings().get<string>('agent') || LmAgent;
  }

  /**
   * Registers every contributed language model tool (package.json,
   * generated from the registry). A call runs through this session like
   * any other: the server's policy decides, and what needs approval is
   * reviewed in this extension's diff view and notifications, so
   * prepareInvocation asks for no confirmation of its own.
   */
  private registerLmTools(): void {
    const contributed = (this.context.extension.packageJSON?.contributes?.languageModelTools ?? []) as LmToolContribution[];
    for (const c of contributed) {
      const tool = agentlsToolOf(c.name);
      if (!tool) { continue; }
      this.disposables.push(vscode.lm.registerTool<Record<string, unknown>>(c.name, {
        prepareInvocation: () => ({ invocationMessage: `agentls: ${tool}` }),
        invoke: async (options, token) => {
          const agent = this.lmAgent();
          // The arguments and the result are logged by the call's tool/event (redacted there).
          this.output.appendLine(`[lm] ${agent} calls ${tool}`);
          const text = await invokeLmTool(this.api, c.name, options.input, agent, token);
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
        },
      }));
    }
  }

  // ---- output ----

  private printProgress(token: string, v: WorkDoneProgressValue): void {
    let p = this.printers.get(token);
    if (!p) { p = new ProgressPrinter(); this.printers.set(token, p); }
    const s = p.format(v);
    if (s) { this.output.append(s); }
    if (v.kind === 'end') { this.printers.delete(token); }
  }

  private toolEvent(e: ToolEvent): void {
    // Progress events repeat what $/progress on the call's token already
    // printed (every call of this session has one).
    if (e.kind !== 'progress') { this.output.appendLine(formatEvent(e)); }
    if (e.kind === 'result') {
      // The server is done with the call: an approval still shown is moot.
      this.queue.drop(e.callId);
    }
  }

  private updateStatus(): void {
    const n = this.queue.size;
    const left = soonestLeft(this.queue.list());
    this.status.text = this.startError && !this.client ? '$(error) agentls' : statusText(n, left);
    this.status.tooltip = this.startError ?? (n === 0 ? 'Agent Tools: no call is waiting for approval'
      : `Agent Tools: ${n} call(s) waiting for your approval — click to review${left ? ` (the first is rejected by itself in ${left})` : ''}`);
    this.status.backgroundColor = n > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  // ---- approvals ----

  private async approval(req: ApprovalRequest, token: vscode.CancellationToken): Promise<ApprovalResponse> {
    const { key, answer, pending } = this.queue.add(req, token);
    this.output.appendLine(`[approval] ${describeRequest(req)} — ${whoAsks(req)}${req.reason ? ' — reason: ' + req.reason : ''}${req.warning ? ' — WARNING: ' + req.warning : ''}${timeLeft(req, pending.received) ? ' — ' + timeLeft(req, pending.received) : ''}`);
    const proposal = buildProposal(key, req, f => this.currentText(f.uri, f.path));
    if (proposal && proposal.files.length > 0) {
      this.proposals.set(key, proposal);
      void this.openDiff(proposal);
    }
    void this.notify(key, req, proposal);
    const r = await answer;
    await this.closeDiff(key);
    this.proposals.delete(key);
    const resp = r ?? { decision: 'reject', message: 'the approval request was withdrawn' };
    this.output.appendLine(`[approval] ${req.tool} ${req.callId}: ${resp.decision}${resp.message ? ' — ' + resp.message : ''}`);
    return resp;
  }

  /**
   * The deadline of a request passed without an answer: its diff closes and
   * the person is told. Nothing is answered: the server rejects the call by
   * itself and withdraws the request (docs/protocol.md, "Approval").
   */
  private async expired(p: PendingApproval, key: string): Promise<void> {
    const req = p.request;
    this.output.appendLine(`[approval] ${req.tool} ${req.callId}: expired — no answer before the deadline, rejected by itself`);
    await this.closeDiff(key);
    this.proposals.delete(key);
    void vscode.window.showWarningMessage(`agentls: review expired — ${req.agent ? req.agent + ': ' : ''}${describeRequest(req)} got no answer in time and is rejected.`);
  }

  /** A file's real URI: the one the server sent, else its path under the first workspace folder. */
  private fileUri(uri: string | undefined, path: string): vscode.Uri | undefined {
    if (uri) { return vscode.Uri.parse(uri); }
    if (path.startsWith('/')) { return vscode.Uri.file(path); }
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    return root ? vscode.Uri.joinPath(root, path) : undefined;
  }

  private currentText(uri: string | undefined, path: string): string | undefined {
    const target = this.fileUri(uri, path);
    if (!target) { return undefined; }
    return vscode.workspace.textDocuments.find(d => d.uri.toString() === target.toString())?.getText();
  }

  private proposalUri(p: Proposal, side: 'old' | 'new', i: number): vscode.Uri {
    return vscode.Uri.from({ scheme: ProposalScheme, ...proposalUriParts(p.key, side, i, p.files[i].path) });
  }

  private proposalContent(uri: vscode.Uri): string {
    const parsed = parseProposalUri(uri.path, uri.query);
    if (!parsed) { return ''; }
    const p = this.proposals.get(parsed.key);
    if (!p) { return '(this proposal was answered or withdrawn)\n'; }
    return proposalText(p, parsed.side, parsed.index) ?? '';
  }

  private async openDiff(p: Proposal): Promise<void> {
    const stat = diffStat(p.unifiedDiff);
    const statText = p.unifiedDiff ? ` (+${stat.added} −${stat.removed})` : '';
    if (p.files.length === 1) {
      await vscode.commands.executeCommand('vscode.diff', this.proposalUri(p, 'old', 0), this.proposalUri(p, 'new', 0),
        `${p.tool}: ${p.files[0].path}${statText} — agent proposal`, { preview: false });
    } else {
      const changes = p.files.map((f, i) => [this.fileUri(f.uri, f.path) ?? this.proposalUri(p, 'new', i), this.proposalUri(p, 'old', i), this.proposalUri(p, 'new', i)]);
      await vscode.commands.executeCommand('vscode.changes', multiTitle(p), changes);
    }
  }

  private async closeDiff(key: string): Promise<void> {
    const tabs: vscode.Tab[] = [];
    for (const g of vscode.window.tabGroups.all) {
      for (const t of g.tabs) {
        const inp = t.input;
        let uri: vscode.Uri | undefined;
        if (inp instanceof vscode.TabInputTextDiff) { uri = inp.modified; }
        else if (inp instanceof vscode.TabInputText) { uri = inp.uri; }
        if (uri?.scheme === ProposalScheme && parseProposalUri(uri.path, uri.query)?.key === key) { tabs.push(t); }
        // Multi-file proposals (vscode.changes) open a tab whose input the API does not expose: match the label.
        const p = this.proposals.get(key);
        if (!uri && p && p.files.length > 1 && t.label.startsWith(multiTitle(p))) { tabs.push(t); }
      }
    }
    if (tabs.length > 0) {
      try { await vscode.window.tabGroups.close(tabs); } catch { /* already closed */ }
    }
  }

  private codeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const parsed = parseProposalUri(doc.uri.path, doc.uri.query);
    if (!parsed || parsed.side !== 'new') { return []; }
    const p = this.queue.get(parsed.key);
    if (!p) { return []; }
    const req = p.request;
    const r = new vscode.Range(0, 0, 0, 0);
    const lenses: vscode.CodeLens[] = [];
    if (offers(req, 'approve')) {
      lenses.push(new vscode.CodeLens(r, { title: '$(check) Approve', command: 'agentls.approval.approve', arguments: [parsed.key], tooltip: 'Apply this edit' }));
    }
    lenses.push(new vscode.CodeLens(r, { title: '$(close) Reject…', command: 'agentls.approval.reject', arguments: [parsed.key], tooltip: 'Reject this edit, optionally telling the agent why' }));
    if (alwaysOffered(req)) {
      lenses.push(new vscode.CodeLens(r, { title: `$(check-all) ${alwaysButton(req)}`, command: 'agentls.approval.always', arguments: [parsed.key], tooltip: `Apply, and do not ask again for such calls (${alwaysButton(req)}); "Agent Tools: Show Remembered Answers" revokes it` }));
    }
    const info = [whoAsks(req), `risk: ${req.risk || 'none'}`];
    const left = timeLeft(req, p.received);
    if (left) { info.push(left); }
    if (req.reason) { info.push(`reason: ${req.reason}`); }
    if (req.warning) { info.push(`⚠ ${req.warning}`); }
    lenses.push(new vscode.CodeLens(r, { title: info.join(' · '), command: '' }));
    return lenses;
  }

  /**
   * The notification of a request, with its buttons. For an edit it goes
   * with the diff view (whose title bar has the same actions); for a
   * command it is the whole question. Dangerous calls ask in a modal
   * dialog. A dismissed notification leaves the request pending: the
   * status bar item brings it back.
   */
  private async notify(key: string, req: ApprovalRequest, proposal?: Proposal): Promise<void> {
    const target = requestTarget(req);
    let message: string;
    if (proposal && proposal.files.length > 0) {
      const stat = diffStat(proposal.unifiedDiff);
      const what = proposal.files.length === 1 ? `${proposal.files[0].operation} ${proposal.files[0].path}` : `change ${proposal.files.length} files`;
      const risk = `risk: ${req.risk || 'write'}`;
      message = `agentls: ${requester(req)} wants to ${what} (${proposal.unifiedDiff ? `+${stat.added} −${stat.removed}, ` : ''}${risk}). Review the diff.`;
    } else if (typeof req.arguments?.command === 'string') {
      message = `agentls: ${requester(req)} wants to run \`${target}\`${req.cwd ? ` in ${req.cwd}` : ''} (risk: ${req.risk || 'none'}).`;
    } else {
      const args = JSON.stringify(req.arguments ?? {});
      message = `agentls: ${requester(req)} wants to run${target ? ' on ' + target : ''} (risk: ${req.risk || 'none'}) with ${args.length > 200 ? args.slice(0, 197) + '...' : args}.`;
    }
    if (req.reason) { message += ` Reason: ${req.reason}`; }
    if (req.warning) { message += ` WARNING: ${req.warning}`; }
    const pend = this.queue.get(key);
    const left = pend ? timeLeft(req, pend.received) : '';
    if (left) { message += ` (${left})`; }
    const modal = req.risk === 'dangerous';
    // The modal's detail: the arguments the message does not already show.
    const rest = { ...(req.arguments ?? {}) } as Record<string, unknown>;
    if (typeof rest.command === 'string') { delete rest.command; }
    const detail = modal && Object.keys(rest).length > 0 ? `Arguments: ${JSON.stringify(rest, null, 1)}` : undefined;
    const always = alwaysButton(req);
    // In the modal of a dangerous call, Reject comes first: it is the default button (Enter).
    const buttons = modal ? ['Reject…'] : [];
    if (offers(req, 'approve')) { buttons.push('Approve'); }
    if (!modal) { buttons.push('Reject…'); }
    if (alwaysOffered(req)) { buttons.push(always); }
    const choice = modal || req.warning
      ? await vscode.window.showWarningMessage(message, { modal, detail }, ...buttons)
      : await vscode.window.showInformationMessage(message, { modal, detail }, ...buttons);
    if (!this.queue.get(key)) {
      // A notification outlives its request (VS Code cannot take it back).
      if (choice) { void vscode.window.showInformationMessage('agentls: this call no longer waits for an answer (answered elsewhere, withdrawn, or its review expired).'); }
      return;
    }
    if (choice === 'Approve') { await this.decide(key, 'approve'); }
    else if (choice === 'Reject…') { await this.decide(key, 'reject'); }
    else if (choice === always) { await this.decide(key, 'always'); }
  }

  /** The key of the approval the active diff shows, when the command came from its title bar. */
  private activeKey(): string | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const inp = tab?.input;
    let uri: vscode.Uri | undefined;
    if (inp instanceof vscode.TabInputTextDiff) { uri = inp.modified; }
    else if (inp instanceof vscode.TabInputText) { uri = inp.uri; }
    uri ??= vscode.window.activeTextEditor?.document.uri;
    if (uri?.scheme === ProposalScheme) { return parseProposalUri(uri.path, uri.query)?.key; }
    if (tab) {
      for (const p of this.proposals.values()) {
        if (p.files.length > 1 && tab.label.startsWith(multiTitle(p))) { return p.key; }
      }
    }
    return this.queue.size === 1 ? this.queue.keyOf(this.queue.list()[0]) : undefined;
  }

  private async decide(key: string | undefined, decision: Decision): Promise<void> {
    if (typeof key !== 'string') { key = this.activeKey(); }
    if (!key || !this.queue.get(key)) {
      void vscode.window.showInformationMessage('agentls: no call is waiting for approval here.');
      return;
    }
    const req = this.queue.get(key)!.request;
    if (!offers(req, decision)) {
      void vscode.window.showWarningMessage(`agentls: "${decision}" is not offered for this call (the server asks every time for dangerous calls). Approve or reject it.`);
      return;
    }
    if (decision === 'always') {
      // An answer for later calls too: a second, distinct confirmation.
      const yes = alwaysButton(req);
      const ok = await vscode.window.showWarningMessage(`agentls: ${yes}? Later calls it covers will run without asking, for this session (or for good with approval.persistAlways).`,
        { modal: true, detail: 'Revoke it with "Agent Tools: Show Remembered Answers".' }, yes);
      if (ok !== yes || !this.queue.get(key)) { return; }
    }
    let message: string | undefined;
    if (decision === 'reject') {
      message = await vscode.window.showInputBox({
        title: 'Reject the agent\'s call',
        prompt: 'Tell the agent why (optional). Enter rejects; Escape rejects without a message.',
        placeHolder: 'e.g. use the existing helper instead',
      });
    }
    this.queue.answer(key, decision, message?.trim() || undefined);
  }

  private async showPending(): Promise<void> {
    const items = this.queue.list().map(p => ({ ...describeWaiting(p), key: this.queue.keyOf(p)! }));
    if (items.length === 0) {
      const a = await vscode.window.showInformationMessage('agentls: no call is waiting for approval.', 'Show Output');
      if (a) { this.output.show(true); }
      return;
    }
    const pick = await vscode.window.showQuickPick(items, { title: 'Calls waiting for your approval', placeHolder: 'Pick one to review' });
    if (!pick) { return; }
    const prop = this.proposals.get(pick.key);
    if (prop) { await this.openDiff(prop); }
    const p = this.queue.get(pick.key);
    if (p) { await this.notify(pick.key, p.request, prop); }
  }

  /** Lists the remembered "always" answers (approval/rules); the chosen one is revoked after a confirmation. */
  private async showRules(): Promise<void> {
    let rules;
    try {
      await this.ready();
      rules = (await this.tools.approvalRules()).rules;
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: approval/rules failed: ${(err as Error).message}`);
      return;
    }
    if (rules.length === 0) {
      void vscode.window.showInformationMessage('agentls: no remembered answers: every call asks as configured.');
      return;
    }
    const pick = await vscode.window.showQuickPick(describeRules(rules), { title: 'Remembered "always" answers', placeHolder: 'Pick one to revoke it' });
    if (!pick) { return; }
    const ok = await vscode.window.showWarningMessage(`agentls: revoke "${pick.label}"? Such calls will ask again.`, { modal: true }, 'Revoke');
    if (ok !== 'Revoke') { return; }
    try {
      const r = await this.tools.approvalRules(pick.id);
      void vscode.window.showInformationMessage(r.removed ? `agentls: revoked: ${pick.label}` : 'agentls: that answer was already gone.');
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: could not revoke: ${(err as Error).message}`);
    }
  }

  // ---- applying edits ----

  /**
   * workspace/applyEdit, as vscode-languageclient does it, plus
   * save-after-apply: the documents the edit touched that were not modified
   * before it are saved once it is applied, before the server is answered.
   */
  private async applyEdit(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
    const edit: LspWorkspaceEdit = params.edit;
    const norm = (u: string) => vscode.Uri.parse(u).toString();
    const open = new Map(vscode.workspace.textDocuments.map(d => [d.uri.toString(), d]));
    for (const c of edit.documentChanges ?? []) {
      if ('textDocument' in c && typeof c.textDocument.version === 'number' && c.textDocument.version >= 0) {
        const d = open.get(norm(c.textDocument.uri));
        if (d && d.version !== c.textDocument.version) {
          return { applied: false, failureReason: `${d.uri.fsPath} changed (version ${d.version}, the edit is for ${c.textDocument.version})` };
        }
      }
    }
    // A moved document's state before the edit is its old URI's: VS Code
    // moves a dirty document with its unsaved text, which stays unsaved.
    const from = new Map([...renamedFrom(edit)].map(([n, o]) => [norm(n), norm(o)]));
    const plan = new SavePlan(touchedUris(edit).map(norm), u => open.get(from.get(u) ?? u)?.isDirty);
    const converted = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
    const applied = await vscode.workspace.applyEdit(converted);
    if (applied && this.capabilities().saveAfterApply) {
      for (const u of plan.toSave()) {
        try {
          const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(u));
          if (doc.isDirty) { await doc.save(); }
        } catch (err) {
          this.output.appendLine(`agentls: could not save ${u}: ${(err as Error).message}`);
        }
      }
    }
    this.output.appendLine(`[edit] ${params.label ?? 'edit'}: ${applied ? 'applied' : 'not applied'}${plan.leftUnsaved().length ? `; left unsaved (you had changes): ${plan.leftUnsaved().join(', ')}` : ''}`);
    return { applied };
  }

  // ---- running a tool by hand ----

  private async runTool(): Promise<void> {
    let tools: ToolDefinition[];
    try {
      tools = sortTools(await this.api.listTools());
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: cannot list the tools: ${(err as Error).message}`);
      return;
    }
    const pick = await vscode.window.showQuickPick(tools.map(t => ({
      label: t.name,
      description: [t.title, t.annotations?.readOnly ? 'read-only' : undefined, t.annotations?.approval === 'ask' ? 'asks approval' : undefined]
        .filter(Boolean).join(' · '),
      detail: t.description.split('\n')[0],
      tool: t,
    })), { title: 'Agent Tools: Run Tool', placeHolder: 'Pick a tool to run', matchOnDetail: true });
    if (!pick) { return; }
    const tool = pick.tool;
    const argsHelp = describeArguments(tool.inputSchema);
    const text = await vscode.window.showInputBox({
      title: `Arguments of ${tool.name} (JSON)`,
      prompt: argsHelp.length ? argsHelp.join(' | ') : 'This tool takes no arguments.',
      value: argumentsTemplate(tool.inputSchema),
      ignoreFocusOut: true,
      validateInput: v => { const r = parseArguments(v); return r.ok ? undefined : r.error; },
    });
    if (text === undefined) { return; }
    const parsed = parseArguments(text);
    if (!parsed.ok) { return; }
    const result = await vscode.window.withProgress({
      location: vscode.ProgressLocation.Window, title: `agentls: running ${tool.name}`, cancellable: true,
    }, (_p, token) => this.api.callTool(tool.name, parsed.value, { token, reason: 'run by hand from the command palette' }))
      .then(r => r, (err: Error) => ({ callId: '', tool: tool.name, status: 'error', content: err.message, error: { code: 'INTERNAL', message: err.message } } as ToolResult));
    await this.showResult(result);
  }

  private async showResult(r: ToolResult): Promise<void> {
    const text = formatResult(r);
    this.output.appendLine(`[result] ${summarizeResult(r)}`);
    const path = `/${r.tool}-${++this.resultSeq}.txt`;
    this.results.set(path, text);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: ResultScheme, path }));
    // Results share one column beside the editor: a new one replaces the last (preview tab).
    const column = vscode.window.visibleTextEditors.find(e => e.document.uri.scheme === ResultScheme)?.viewColumn ?? vscode.ViewColumn.Beside;
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: column });
    const errs = schemaErrors(r);
    if (errs.length > 0) {
      void vscode.window.showErrorMessage(`agentls: invalid arguments for ${r.tool}: ${errs.join('; ')}`);
    } else if (r.status === 'error') {
      void vscode.window.showErrorMessage(`agentls: ${summarizeResult(r)}`);
    } else if (r.status !== 'success') {
      void vscode.window.showWarningMessage(`agentls: ${summarizeResult(r)}`);
    }
  }
}
