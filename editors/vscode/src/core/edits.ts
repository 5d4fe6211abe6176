// Bookkeeping for save-after-apply (docs/protocol.md, "Approval"): the buffers an
// approved edit touched that were not modified before it are saved after it.

/** The LSP WorkspaceEdit fields this module reads. */
export interface LspWorkspaceEdit {
  changes?: { [uri: string]: unknown[] };
  documentChanges?: Array<
    | { textDocument: { uri: string; version?: number | null }; edits: Array<{ newText: string; annotationId?: string }> }
    | { kind: 'create'; uri: string; annotationId?: string }
    | { kind: 'rename'; oldUri: string; newUri: string; annotationId?: string }
    | { kind: 'delete'; uri: string; annotationId?: string }
  >;
  changeAnnotations?: { [id: string]: { label: string; description?: string; needsConfirmation?: boolean } };
}

/** The URIs whose text an edit changes (text edits and created or renamed-to files). */
export function touchedUris(edit: LspWorkspaceEdit): string[] {
  const out = new Set<string>();
  for (const uri of Object.keys(edit.changes ?? {})) { out.add(uri); }
  for (const c of edit.documentChanges ?? []) {
    if ('textDocument' in c) {
      out.add(c.textDocument.uri);
    } else if (c.kind === 'create') {
      out.add(c.uri);
    } else if (c.kind === 'rename') {
      out.delete(c.oldUri);
      out.add(c.newUri);
    } else if (c.kind === 'delete') {
      out.delete(c.uri);
    }
  }
  return [...out];
}

/**
 * The URI each file the edit renames had before the edit (new URI → old
 * URI, through chains of renames): a moved document's state before the edit
 * is its old URI's.
 */
export function renamedFrom(edit: LspWorkspaceEdit): Map<string, string> {
  const from = new Map<string, string>();
  for (const c of edit.documentChanges ?? []) {
    if (!('textDocument' in c) && c.kind === 'rename') {
      from.set(c.newUri, from.get(c.oldUri) ?? c.oldUri);
      from.delete(c.oldUri);
    }
  }
  return from;
}

/** Whether the edit asks the editor to confirm it (a change annotation with needsConfirmation). */
export function needsConfirmation(edit: LspWorkspaceEdit): boolean {
  return Object.values(edit.changeAnnotations ?? {}).some(a => a.needsConfirmation === true);
}

/** Documents' state before an edit: true dirty, false open and clean, undefined not open. */
export type DirtyState = (uri: string) => boolean | undefined;

/**
 * Takes a snapshot before the edit and tells, after it, which documents to
 * save: those that were not modified before (clean or not open).
 */
export class SavePlan {
  readonly before: ReadonlyMap<string, boolean | undefined>;

  constructor(readonly uris: string[], dirty: DirtyState) {
    const m = new Map<string, boolean | undefined>();
    for (const u of uris) { m.set(u, dirty(u)); }
    this.before = m;
  }

  /** The URIs to save once the edit was applied. */
  toSave(): string[] {
    return this.uris.filter(u => this.before.get(u) !== true);
  }

  /** The URIs that stay unsaved because the person had unsaved changes in them. */
  leftUnsaved(): string[] {
    return this.uris.filter(u => this.before.get(u) === true);
  }
}
