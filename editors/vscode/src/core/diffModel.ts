import { ApprovalRequest, FilePreview } from './protocol';

/** The URI scheme of the proposal documents shown in the diff view. */
export const ProposalScheme = 'agentls-proposal';

export type Side = 'old' | 'new';

/** One file of a proposed edit, both sides known. */
export interface ProposalFile {
  /** Path as the server names it (relative to the first root when inside it). */
  path: string;
  /** The file's real URI (file:), when the server sent it. */
  uri?: string;
  operation: string;
  newPath?: string;
  oldText: string;
  newText: string;
}

/** A proposed edit: what the diff view shows for one approval request. */
export interface Proposal {
  key: string;
  callId: string;
  tool: string;
  title: string;
  files: ProposalFile[];
  unifiedDiff: string;
}

/**
 * Builds the proposal of an approval request, or undefined when the request
 * has no preview (a command, a fetch). current(path, uri) gives the current
 * text of a file whose oldText the server did not send (the editor's
 * buffer or the disk); a newText that is missing is rebuilt from the
 * unified diff.
 */
export function buildProposal(key: string, req: ApprovalRequest, current?: (f: FilePreview) => string | undefined): Proposal | undefined {
  const preview = req.preview;
  if (!preview || (!preview.files?.length && !preview.unifiedDiff)) { return undefined; }
  const diffs = splitUnifiedDiff(preview.unifiedDiff ?? '');
  let files: ProposalFile[] = (preview.files ?? []).map(f => {
    const op = f.operation;
    let oldText = f.oldText;
    if (oldText === undefined) {
      oldText = op === 'create' ? '' : (current?.(f) ?? '');
    }
    let newText = f.newText;
    if (newText === undefined) {
      if (op === 'delete') {
        newText = '';
      } else {
        const d = diffs.find(d => samePath(d.newPath, f.path) || samePath(d.oldPath, f.path));
        newText = d ? applyUnifiedDiff(oldText, d.text) ?? oldText : oldText;
      }
    }
    return { path: f.path, uri: f.uri, operation: op, newPath: f.newPath, oldText, newText };
  });
  if (files.length === 0) {
    // A diff without a file list: one entry per file of the diff.
    files = diffs.map(d => {
      const path = d.newPath === '/dev/null' ? d.oldPath : d.newPath;
      const oldText = d.oldPath === '/dev/null' ? '' : (current?.({ path, operation: 'modify' }) ?? '');
      return {
        path, operation: d.oldPath === '/dev/null' ? 'create' : d.newPath === '/dev/null' ? 'delete' : 'modify',
        oldText, newText: applyUnifiedDiff(oldText, d.text) ?? oldText,
      };
    });
  }
  const what = files.length === 1 ? `${files[0].path}` : `${files.length} files`;
  return {
    key, callId: req.callId, tool: req.tool, files, unifiedDiff: preview.unifiedDiff ?? '',
    title: `${req.tool}: ${what} (proposed by the agent)`,
  };
}

function samePath(a: string | undefined, b: string): boolean {
  if (!a) { return false; }
  const strip = (p: string) => p.replace(/^[ab]\//, '').replace(/^\.\//, '');
  return strip(a) === strip(b) || a.endsWith('/' + strip(b));
}

/**
 * A proposal document's URI parts: the path is the file's own path (so the
 * diff view names the file, and both sides have the same name), the query
 * says which proposal, which side and which file.
 */
export function proposalUriParts(key: string, side: Side, index: number, filePath: string): { path: string; query: string } {
  const clean = filePath.replace(/^\/+/, '');
  return { path: `/${clean}`, query: `key=${encodeURIComponent(key)}&side=${side}&i=${index}` };
}

/** Parses a proposal document's URI parts; undefined when they are not one. */
export function parseProposalUri(path: string, query: string): { key: string; side: Side; index: number; filePath: string } | undefined {
  const q = new URLSearchParams(query);
  const key = q.get('key'), side = q.get('side'), i = q.get('i');
  if (!key || (side !== 'old' && side !== 'new') || i === null || !/^\d+$/.test(i)) { return undefined; }
  return { key, side, index: Number(i), filePath: path.replace(/^\//, '') };
}

/** The text of a proposal document. */
export function proposalText(p: Proposal, side: Side, index: number): string | undefined {
  const f = p.files[index];
  if (!f) { return undefined; }
  return side === 'old' ? f.oldText : f.newText;
}

/** Counts added and removed lines of a unified diff. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0, removed = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++') || l.startsWith('---')) { continue; }
    if (l.startsWith('+')) { added++; } else if (l.startsWith('-')) { removed++; }
  }
  return { added, removed };
}

export interface FileDiff { oldPath: string; newPath: string; text: string }

/** Splits a multi-file unified diff into one part per file. */
export function splitUnifiedDiff(diff: string): FileDiff[] {
  const out: FileDiff[] = [];
  const lines = diff.split('\n');
  let cur: { oldPath: string; newPath: string; lines: string[] } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith('--- ') && i + 1 < lines.length && lines[i + 1].startsWith('+++ ')) {
      if (cur) { out.push({ oldPath: cur.oldPath, newPath: cur.newPath, text: cur.lines.join('\n') }); }
      cur = { oldPath: headerPath(l.slice(4)), newPath: headerPath(lines[i + 1].slice(4)), lines: [l, lines[i + 1]] };
      i++;
      continue;
    }
    cur?.lines.push(l);
  }
  if (cur) { out.push({ oldPath: cur.oldPath, newPath: cur.newPath, text: cur.lines.join('\n') }); }
  return out;
}

function headerPath(h: string): string {
  const p = h.split('\t')[0].trim();
  return p === '/dev/null' ? p : p.replace(/^[ab]\//, '');
}

/**
 * Applies a one-file unified diff to text. Returns undefined when a hunk
 * does not match. Hunks are located by their context, near the line the
 * header names.
 */
export function applyUnifiedDiff(text: string, diff: string): string | undefined {
  const src = text === '' ? [] : text.split('\n');
  // A text ending in a newline splits into a last empty element: keep it
  // out of the lines and put it back at the end.
  let trailingNewline = false;
  if (src.length > 0 && src[src.length - 1] === '') { src.pop(); trailingNewline = true; }
  const out: string[] = [];
  let pos = 0;
  let newNoEOL = false, sawHunk = false;
  const lines = diff.split('\n');
  let i = 0;
  while (i < lines.length && !lines[i].startsWith('@@')) { i++; }
  while (i < lines.length) {
    const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i]);
    if (!h) { i++; continue; }
    sawHunk = true;
    i++;
    const before: string[] = [], after: string[] = [];
    let lastKind = '';
    while (i < lines.length && !lines[i].startsWith('@@')) {
      const l = lines[i];
      if (l.startsWith('\\')) {
        if (lastKind === '+' || lastKind === ' ') { newNoEOL = true; }
        i++; continue;
      }
      if (l === '' && i === lines.length - 1) { i++; break; }
      const kind = l[0] ?? ' ';
      const body = l.slice(1);
      if (kind === ' ') { before.push(body); after.push(body); } else if (kind === '-') { before.push(body); } else if (kind === '+') { after.push(body); } else { break; }
      lastKind = kind;
      i++;
    }
    const want = Math.max(0, Number(h[1]) - (before.length === 0 ? 0 : 1));
    const at = findBlock(src, before, pos, want);
    if (at < 0) { return undefined; }
    out.push(...src.slice(pos, at), ...after);
    pos = at + before.length;
  }
  if (!sawHunk) { return undefined; }
  out.push(...src.slice(pos));
  let result = out.join('\n');
  const endsWithChange = pos >= src.length;
  if (out.length > 0 && (endsWithChange ? !newNoEOL : trailingNewline)) { result += '\n'; }
  return result;
}

function findBlock(src: string[], block: string[], from: number, near: number): number {
  const fits = (at: number) => at >= from && at + block.length <= src.length && block.every((l, k) => src[at + k] === l);
  if (block.length === 0) { return Math.max(from, Math.min(near, src.length)); }
  for (let d = 0; d <= src.length; d++) {
    if (fits(near - d)) { return near - d; }
    if (fits(near + d)) { return near + d; }
  }
  return -1;
}
