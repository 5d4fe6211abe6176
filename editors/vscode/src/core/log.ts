import { ToolEvent, WorkDoneProgressValue } from './protocol';

function time(d: Date): string {
  return d.toISOString().slice(11, 19);
}

function short(v: unknown, max = 200): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  if (s === undefined) { return ''; }
  return s.length > max ? s.slice(0, max - 3) + '...' : s;
}

/** One log line for a tool/event. */
export function formatEvent(e: ToolEvent, now = new Date()): string {
  const head = `[${time(now)}] ${e.tool} ${e.callId}`;
  switch (e.kind) {
    case 'call':
      return `${head} call${e.agent ? ` by ${e.agent}` : ''} ${short(e.arguments)}${e.needsApproval ? ' (needs approval)' : ''}`;
    case 'awaitingApproval':
      return `${head} waiting for approval${e.risk ? ` (risk: ${e.risk})` : ''}`;
    case 'progress':
      return `${head} progress${e.percent !== undefined ? ` ${e.percent}%` : ''}${e.message ? ': ' + short(e.message) : ''}`;
    case 'result':
      return `${head} result: ${e.status ?? '?'}`;
    case 'fileChanged':
      return `${head} ${e.operation ?? 'changed'} ${e.path ?? ''}`;
    default:
      return `${head} ${e.kind}${e.message ? ': ' + short(e.message) : ''}`;
  }
}

/**
 * Turns $/progress on a call's token into output channel text: a header at
 * begin, the streamed chunks verbatim as they come (shell output is cut
 * anywhere, so no newline is added between chunks), a footer at end on a
 * line of its own.
 */
export class ProgressPrinter {
  private atLineStart = true;

  format(v: WorkDoneProgressValue, now = new Date()): string {
    let s = '';
    switch (v.kind) {
      case 'begin':
        s = `${this.atLineStart ? '' : '\n'}[${time(now)}] ▶ ${v.title}${v.message ? ': ' + v.message : ''}\n`;
        break;
      case 'report':
        s = v.message ?? '';
        break;
      case 'end':
        s = `${this.atLineStart ? '' : '\n'}[${time(now)}] ■ ${v.message ?? 'done'}\n`;
        break;
    }
    if (s !== '') { this.atLineStart = s.endsWith('\n'); }
    return s;
  }
}
