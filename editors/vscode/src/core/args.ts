import { JsonSchema, ToolDefinition, ToolResult } from './protocol';

export type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** Parses the arguments a person typed: a JSON object (empty text is {}). */
export function parseArguments(text: string): Parsed {
  const t = text.trim();
  if (t === '') { return { ok: true, value: {} }; }
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch (e) {
    return { ok: false, error: `not valid JSON: ${(e as Error).message}` };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return { ok: false, error: 'the arguments must be a JSON object, like {"path": "README.md"}' };
  }
  return { ok: true, value: v as Record<string, unknown> };
}

/**
 * A starting value for the arguments box: the required properties with
 * placeholder values of their type, as one line of JSON.
 */
export function argumentsTemplate(schema: JsonSchema | undefined): string {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema?.required ?? []) as string[];
  const o: Record<string, unknown> = {};
  for (const k of required) {
    const p = props[k] ?? {};
    o[k] = placeholder(p);
  }
  return JSON.stringify(o);
}

function placeholder(p: JsonSchema): unknown {
  if (p.default !== undefined) { return p.default; }
  if (Array.isArray(p.enum) && p.enum.length > 0) { return p.enum[0]; }
  switch (Array.isArray(p.type) ? p.type[0] : p.type) {
    case 'integer': case 'number': return 0;
    case 'boolean': return false;
    case 'array': return [];
    case 'object': return {};
    default: return '';
  }
}

/** One line per argument: name, type, required, description. */
export function describeArguments(schema: JsonSchema | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.entries(props).map(([k, p]) => {
    const type = Array.isArray(p.enum) ? (p.enum as unknown[]).map(v => JSON.stringify(v)).join('|') : String(p.type ?? 'any');
    return `${k}${required.has(k) ? '' : '?'}: ${type}${p.description ? ' — ' + String(p.description) : ''}`;
  });
}

/** The schema violations of an INVALID_PARAMS result, one per line, or [] for none. */
export function schemaErrors(r: ToolResult): string[] {
  if (r.status !== 'error' || r.error?.code !== 'INVALID_PARAMS') { return []; }
  const v = r.error.details?.violations;
  if (Array.isArray(v) && v.length > 0) {
    return v.map(x => `${x.pointer || '/'}: ${x.reason}`);
  }
  return [r.error.message];
}

/** A short summary of a result for a notification. */
export function summarizeResult(r: ToolResult): string {
  switch (r.status) {
    case 'success': return `${r.tool} succeeded${r.durationMs !== undefined ? ` in ${r.durationMs} ms` : ''}`;
    case 'rejected': return `${r.tool} was rejected${r.message ? ': ' + r.message : ''}`;
    case 'cancelled': return `${r.tool} was cancelled`;
    default: {
      const errs = schemaErrors(r);
      if (errs.length > 0) { return `${r.tool}: invalid arguments: ${errs.join('; ')}`; }
      return `${r.tool} failed: ${r.error?.code ?? 'ERROR'}: ${r.error?.message ?? r.content}`;
    }
  }
}

/** The result as a document a person reads (markdown-free plain text). */
export function formatResult(r: ToolResult): string {
  const lines: string[] = [];
  lines.push(`# ${r.tool} — ${r.status}${r.callId ? ` (${r.callId})` : ''}`);
  if (r.approvedBy) { lines.push(`# approved by: ${r.approvedBy}, ${r.durationMs ?? 0} ms`); }
  if (r.message) { lines.push(`# message: ${r.message}`); }
  if (r.error) {
    lines.push(`# error ${r.error.code}: ${r.error.message}`);
    for (const e of schemaErrors(r)) { lines.push(`#   ${e}`); }
  }
  lines.push('');
  lines.push(r.display || r.content || '');
  if (r.structured !== undefined) {
    lines.push('', '# structured:', JSON.stringify(r.structured, null, 2));
  }
  return lines.join('\n');
}

/** Sorts tools for a picker: by name. */
export function sortTools(tools: ToolDefinition[]): ToolDefinition[] {
  return [...tools].sort((a, b) => a.name.localeCompare(b.name));
}
