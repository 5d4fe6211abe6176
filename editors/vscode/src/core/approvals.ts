import { ApprovalRequest, ApprovalResponse, CancellationTokenLike, Decision } from './protocol';

/** One approval/request waiting for the person. */
export interface PendingApproval {
  readonly request: ApprovalRequest;
  readonly received: Date;
  /** Settles the request; later calls do nothing. Returns whether this call settled it. */
  settle(response: ApprovalResponse): boolean;
}

type Listener = () => void;

/**
 * The approval requests waiting for an answer. Several may wait at once
 * (the server asks asynchronously); each is answered once, by whichever UI
 * the person uses first, or dropped when the server gives up on it.
 */
export class ApprovalQueue {
  private readonly pending = new Map<string, { p: PendingApproval; resolve: (r: ApprovalResponse | undefined) => void }>();
  private readonly listeners = new Set<Listener>();
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
   * Adds a request. The promise resolves with the person's answer, or with
   * undefined when the request is dropped (token cancelled, drop()).
   */
  add(request: ApprovalRequest, token?: CancellationTokenLike): { key: string; pending: PendingApproval; answer: Promise<ApprovalResponse | undefined> } {
    let key = request.callId || `approval-${++this.seq}`;
    if (this.pending.has(key)) { key = `${key}#${++this.seq}`; }
    let resolve!: (r: ApprovalResponse | undefined) => void;
    const answer = new Promise<ApprovalResponse | undefined>(r => { resolve = r; });
    let done = false;
    let sub: { dispose(): void } | undefined;
    const finish = (r: ApprovalResponse | undefined): boolean => {
      if (done) { return false; }
      done = true;
      this.pending.delete(key);
      sub?.dispose();
      resolve(r);
      this.fire();
      return true;
    };
    const p: PendingApproval = { request, received: new Date(), settle: r => finish(r) };
    this.pending.set(key, { p, resolve: finish });
    sub = token?.onCancellationRequested(() => finish(undefined));
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

/** The status bar text for n waiting calls. */
export function statusText(n: number): string {
  return n === 0 ? '$(tools) agentls' : `$(bell-dot) agentls: ${n} waiting`;
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
