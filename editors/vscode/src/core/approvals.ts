import { ApprovalRequest, ApprovalResponse, ApprovalRule, CancellationTokenLike, Decision } from './protocol';

/** One approval/request waiting for the person. */
export interface PendingApproval {
  readonly request: ApprovalRequest;
  readonly received: Date;
  /** When the server rejects the request by itself (ms since the epoch, local clock: deadlineOf), or undefined. */
  readonly deadline?: number;
  /** Settles the request; later calls do nothing. Returns whether this call settled it. */
  settle(response: ApprovalResponse): boolean;
}

type Listener = () => void;
type ExpiryListener = (p: PendingApproval, key: string) => void;

/**
 * The approval requests waiting for an answer. Several may wait at once
 * (the server asks asynchronously); each is answered once, by whichever UI
 * the person uses first, or dropped when the server gives up on it.
 */
export class ApprovalQueue {
  private readonly pending = new Map<string, { p: PendingApproval; resolve: (r: ApprovalResponse | undefined) => void }>();
  private readonly listeners = new Set<Listener>();
  private readonly expiryListeners = new Set<ExpiryListener>();
  private seq = 0;

  /** Number of calls waiting for approval. */
  get size(): number { return this.pending.size; }

  list(): PendingApproval[] { return [...this.pending.values()].map(e => e.p); }

  get(key: string): PendingApproval | undefined { return this.pending.get(key)?.p; }

  /** The key of a pending request: its callId, made unique if repeated. */
  keyOf(p: PendingApproval): string | undefined {
    for (const [k, e] of this.pending) { if (e.p === p) { return k; } }
    return undefined;
  }

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /**
   * Called when a request's deadline passed without an answer: it left the
   * queue (the person can no longer answer it), and its promise waits for
   * the server to withdraw it (the token), sending no answer meanwhile: the
   * server rejects the call by itself (docs/protocol.md, "Approval").
   */
  onDidExpire(listener: ExpiryListener): { dispose(): void } {
    this.expiryListeners.add(listener);
    return { dispose: () => this.expiryListeners.delete(listener) };
  }

  /**
   * Adds a request. The promise resolves with the person's answer, or with
   * undefined when the request is dropped (token cancelled, drop()). At its
   * deadline it leaves the queue unanswered (onDidExpire).
   */
  add(request: ApprovalRequest, token?: CancellationTokenLike): { key: string; pending: PendingApproval; answer: Promise<ApprovalResponse | undefined> } {
    let key = request.callId || `approval-${++this.seq}`;
    if (this.pending.has(key)) { key = `${key}#${++this.seq}`; }
    let resolve!: (r: ApprovalResponse | undefined) => void;
    const answer = new Promise<ApprovalResponse | undefined>(r => { resolve = r; });
    let done = false;
    let sub: { dispose(): void } | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Leaves the queue: only this request's entry (its key may be taken
    // again once it expired).
    const leave = (): void => {
      if (this.pending.get(key)?.p === p) { this.pending.delete(key); }
      if (timer !== undefined) { clearTimeout(timer); timer = undefined; }
    };
    const finish = (r: ApprovalResponse | undefined): boolean => {
      if (done) { return false; }
      done = true;
      leave();
      sub?.dispose();
      resolve(r);
      this.fire();
      return true;
    };
    const received = new Date();
    const p: PendingApproval = { request, received, deadline: deadlineOf(request, received), settle: r => (this.pending.get(key)?.p === p ? finish(r) : false) };
    this.pending.set(key, { p, resolve: finish });
    // The deadline passed: the request leaves the queue unanswered and the
    // expiry listeners hear of it.
    const expire = (): void => {
      if (done || this.pending.get(key)?.p !== p) { return; }
      leave();
      this.fire();
      for (const l of [...this.expiryListeners]) {
        try { l(p, key); } catch { /* a listener's failure is not the queue's */ }
      }
    };
    sub = token?.onCancellationRequested(() => {
      // The server withdraws the request when it rejects the call at the
      // deadline; that may come before the local timer (the clocks agree
      // within clockSkewMs). It is still the deadline that passed.
      if (p.deadline !== undefined && Date.now() >= p.deadline - clockSkewMs) { expire(); }
      finish(undefined);
    });
    if (p.deadline !== undefined) {
      timer = setTimeout(() => { timer = undefined; expire(); }, Math.max(0, p.deadline - Date.now()));
      // A waiting deadline keeps no process alive (node's timers).
      (timer as { unref?: () => void }).unref?.();
    }
    this.fire();
    if (token?.isCancellationRequested) { finish(undefined); }
    return { key, pending: p, answer };
  }

  /** Answers the request with this key (or callId). */
  answer(key: string, decision: Decision, message?: string): boolean {
    const e = this.pending.get(key);
    if (!e) { return false; }
    const r: ApprovalResponse = { decision };
    if (message) { r.message = message; }
    return e.p.settle(r);
  }

  /** Drops every request of this callId (the server finished or gave up on the call). */
  drop(callId: string): number {
    let n = 0;
    for (const [k, e] of [...this.pending]) {
      if (k === callId || e.p.request.callId === callId) { e.resolve(undefined); n++; }
    }
    return n;
  }

  /** Drops everything (the connection ended). */
  clear(): void {
    for (const e of [...this.pending.values()]) { e.resolve(undefined); }
  }

  private fire(): void {
    for (const l of [...this.listeners]) {
      try { l(); } catch { /* a listener's failure is not the queue's */ }
    }
  }
}

/** The status bar text for n waiting calls, with the time left of the first to expire ("4:32"). */
export function statusText(n: number, left?: string): string {
  if (n === 0) { return '$(tools) agentls'; }
  return `$(bell-dot) agentls: ${n} waiting${left ? ` · ${left} left` : ''}`;
}

/** The time left of the waiting call that expires first ("4:32"), or '' when none has a deadline. */
export function soonestLeft(pending: PendingApproval[], now: number = Date.now()): string {
  const dls = pending.map(p => p.deadline).filter((d): d is number => d !== undefined);
  return dls.length === 0 ? '' : duration(Math.min(...dls) - now);
}

/** ms as M:SS, never negative; a started second counts. */
function duration(ms: number): string {
  const left = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
}

/**
 * Whether the request offers a decision: exactly its options (approve and
 * reject when a server sends none). "always" is never offered for a
 * dangerous call, whatever a server says.
 */
export function offers(r: ApprovalRequest, decision: Decision): boolean {
  const opts = Array.isArray(r.options) && r.options.length > 0 ? r.options : ['approve', 'reject'];
  if (decision === 'always' && r.risk === 'dangerous') { return false; }
  return opts.includes(decision);
}

/** The button of "always": what it covers, in the server's words. */
export function alwaysButton(r: ApprovalRequest): string {
  const l = typeof r.alwaysLabel === 'string' && r.alwaysLabel !== '' ? r.alwaysLabel : `always allow ${r.tool}`;
  return l.charAt(0).toUpperCase() + l.slice(1);
}

/**
 * How far apart expiresAt and timeoutMs may be before the local clock is
 * taken to be off (docs/protocol.md, "Approval").
 */
export const clockSkewMs = 2000;

/**
 * When the server rejects the request by itself (ms since the epoch, on the
 * local clock), or undefined: its expiresAt when that agrees with timeoutMs
 * (the clocks agree), else timeoutMs after it was received (the local clock
 * is off); without timeoutMs, expiresAt, deadline, or timeoutSeconds after
 * it was received.
 */
export function deadlineOf(r: ApprovalRequest, received: Date): number | undefined {
  const at = typeof r.expiresAt === 'string' ? Date.parse(r.expiresAt) : NaN;
  const ms = typeof r.timeoutMs === 'number' && r.timeoutMs >= 0 ? r.timeoutMs : undefined;
  if (!Number.isNaN(at) && ms !== undefined) {
    return Math.abs(at - received.getTime() - ms) <= clockSkewMs ? at : received.getTime() + ms;
  }
  if (!Number.isNaN(at)) { return at; }
  if (ms !== undefined) { return received.getTime() + ms; }
  if (typeof r.deadline === 'string') {
    const t = Date.parse(r.deadline);
    if (!Number.isNaN(t)) { return t; }
  }
  if (typeof r.timeoutSeconds === 'number' && r.timeoutSeconds > 0) { return received.getTime() + r.timeoutSeconds * 1000; }
  return undefined;
}

function clock(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map(n => String(n).padStart(2, '0')).join(':');
}

/** "4:32 left (rejected by itself at 17:05:00)", or '' without a deadline. */
export function timeLeft(r: ApprovalRequest, received: Date, now: number = Date.now()): string {
  const dl = deadlineOf(r, received);
  if (dl === undefined) { return ''; }
  return `${duration(dl - now)} left (rejected by itself at ${clock(dl)})`;
}

/** Who asks: "claude wants to run shell_exec in /work/x". */
export function whoAsks(r: ApprovalRequest): string {
  const who = typeof r.agent === 'string' && r.agent !== '' ? r.agent : 'The agent';
  const where = typeof r.cwd === 'string' && r.cwd !== '' ? ` in ${r.cwd}` : '';
  return `${who} wants to run ${r.tool}${where}`;
}

/** Who wants the call, to start a question with: "claude (shell_exec)", or the tool alone when no agent is named. */
export function requester(r: ApprovalRequest): string {
  return typeof r.agent === 'string' && r.agent !== '' ? `${r.agent} (${r.tool})` : r.tool;
}

/** One line per waiting review, for the list of reviews. */
export function describeWaiting(p: PendingApproval, now: number = Date.now()): { label: string; description: string; detail: string } {
  const r = p.request;
  const left = timeLeft(r, p.received, now).replace(/ \(.*$/, '');
  const detail = [r.cwd ? `in ${r.cwd}` : '', r.reason ? `reason: ${r.reason}` : '', r.warning ? `⚠ ${r.warning}` : ''].filter(Boolean).join(' · ');
  return {
    label: `${r.agent ? r.agent + ': ' : ''}${describeRequest(r)}`,
    description: [left, r.callId].filter(Boolean).join(' · '),
    detail,
  };
}

/** The quick pick items of the remembered answers (approval/rules). */
export function describeRules(rules: ApprovalRule[]): Array<{ label: string; description: string; id: string }> {
  return rules.map(r => ({
    label: r.label || `always allow ${r.tool}`,
    description: `${r.tool} · ${r.persisted ? 'persisted' : 'this session'}`,
    id: r.id,
  }));
}

/** A one-line description of a request, for notifications and pickers. */
export function describeRequest(r: ApprovalRequest): string {
  const target = requestTarget(r);
  const risk = r.risk ? ` (${r.risk})` : '';
  return `${r.tool}${target ? ' ' + target : ''}${risk}`;
}

/** What a request acts on: its files, its command or its URL. */
export function requestTarget(r: ApprovalRequest): string {
  const files = r.preview?.files ?? [];
  if (files.length === 1) { return files[0].path; }
  if (files.length > 1) { return `${files.length} files`; }
  const a = r.arguments ?? {};
  for (const k of ['command', 'path', 'url', 'from', 'source', 'name', 'patch']) {
    const v = (a as Record<string, unknown>)[k];
    if (typeof v === 'string' && v !== '') { return v.length > 120 ? v.slice(0, 117) + '...' : v; }
  }
  return '';
}
