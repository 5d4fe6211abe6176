// The agentls tools as VS Code language model tools, for VS Code's own
// agents: the `contributes.languageModelTools` entries made from the
// registry (gen-lm-tools.mjs writes them into package.json;
// test/lmTools.test.ts fails when they are out of date), and a call's
// ToolResult as the text the model reads. The calls themselves go through
// the extension's session, so the person reviews them as any other.
import * as fs from 'fs';
import * as path from 'path';
import { AgentlsApi, CancellationTokenLike, ToolDefinition, ToolResult } from './protocol';
import { nextSteps } from './nextSteps';

/** What the names of agentls's language model tools start with: `agentls_read_file`. */
export const LmToolPrefix = 'agentls_';

/** The agent a language model tool call names when the settings name none (the API does not say who calls). */
export const LmAgent = 'VS Code agent';

/** One entry of `contributes.languageModelTools`. */
export interface LmToolContribution {
  name: string;
  toolReferenceName: string;
  displayName: string;
  userDescription: string;
  modelDescription: string;
  canBeReferencedInPrompt: boolean;
  tags: string[];
  inputSchema: Record<string, unknown>;
}

/** The language model tool of a tool: agentls_ before its name. */
export function lmToolName(tool: string): string {
  return LmToolPrefix + tool;
}

/** The agentls tool of a language model tool's name; undefined for another extension's. */
export function agentlsToolOf(lmName: string): string | undefined {
  return lmName.startsWith(LmToolPrefix) && lmName.length > LmToolPrefix.length ? lmName.slice(LmToolPrefix.length) : undefined;
}

/** The first sentence of a description (up to a period outside parentheses and code): what a person reads in the tool picker. */
export function firstSentence(s: string): string {
  const text = s.trim();
  let depth = 0;
  let code = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '`') { code = !code; }
    else if (code) { continue; }
    else if (ch === '(') { depth++; }
    else if (ch === ')') { depth = Math.max(0, depth - 1); }
    else if (ch === '.' && depth === 0 && (i + 1 === text.length || /\s/.test(text[i + 1]))) { return text.slice(0, i + 1); }
  }
  return text;
}

/**
 * The contribution of each tool, in the order given: named agentls_<tool>
 * (also its #reference in chat), described to the model by the tool's own
 * description and input schema, tagged `agentls` plus `read-only` or
 * `asks-approval`.
 */
export function lmToolContributions(defs: ToolDefinition[]): LmToolContribution[] {
  return defs.map(d => {
    const tags = ['agentls'];
    if (d.annotations?.readOnly) { tags.push('read-only'); }
    if (d.annotations?.approval && d.annotations.approval !== 'auto') { tags.push('asks-approval'); }
    return {
      name: lmToolName(d.name),
      toolReferenceName: lmToolName(d.name),
      displayName: d.title || d.name,
      userDescription: firstSentence(d.description),
      modelDescription: d.description,
      canBeReferencedInPrompt: true,
      tags,
      inputSchema: d.inputSchema,
    };
  });
}

/**
 * The text the model reads of a result. A success is its content (the
 * structured result as JSON when the content is empty). Anything else is
 * `CODE: cause` on the first line (REJECTED, CANCELLED for those
 * statuses), then `details:` when the error has some, the tool's own text
 * when it says more, `result:` with the structured result, and last
 * `next:`, what to do about that code — the text `agentls mcp` gives MCP
 * clients (mcp/result.go).
 */
export function lmResultText(r: ToolResult): string {
  if (r.status === 'success') {
    if (r.content !== '' || r.structured === undefined) { return r.content; }
    return JSON.stringify(r.structured);
  }
  const code = r.error?.code ?? (r.status === 'rejected' ? 'REJECTED' : r.status === 'cancelled' ? 'CANCELLED' : 'INTERNAL');
  const cause = r.error?.message ?? r.content.trim();
  const lines = [`${code}: ${cause}`];
  if (r.error?.details !== undefined) { lines.push(`details: ${JSON.stringify(r.error.details)}`); }
  const c = r.content.trim();
  if (c !== '' && c !== `error: ${cause}` && !c.includes(cause)) { lines.push(c); }
  if (r.structured !== undefined && r.structured !== null) { lines.push(`result: ${JSON.stringify(r.structured)}`); }
  let next = nextSteps[code] ?? 'read the cause above, fix it and try again.';
  if (r.status === 'error' && !r.error?.recoverable && code !== 'REJECTED' && code !== 'CANCELLED') {
    next += ' This error is not recoverable by retrying.';
  }
  lines.push(`next: ${next}`);
  return lines.join('\n');
}

/**
 * Runs the tool behind a language model tool through api (the extension's
 * session: its policy, its review, its output) as agent, and returns the
 * text for the model. A call that cannot be made (no server, no such
 * tool) is an INTERNAL result that says why, never an exception: the model
 * reads it like any other failure.
 */
export async function invokeLmTool(api: AgentlsApi, lmName: string, input: unknown, agent: string, token?: CancellationTokenLike): Promise<string> {
  const tool = agentlsToolOf(lmName) ?? lmName;
  const args = input !== null && typeof input === 'object' && !Array.isArray(input) ? input as Record<string, unknown> : {};
  let r: ToolResult;
  try {
    r = await api.callTool(tool, args, { agent, token });
  } catch (err) {
    const msg = `agentls could not run ${tool}: ${(err as Error)?.message ?? String(err)}`;
    r = { callId: '', tool, status: 'error', content: msg, error: { code: 'INTERNAL', message: msg } };
  }
  return lmResultText(r);
}

/**
 * The next step of each error code, read from the Go sources: the codes'
 * constants (`Name Code = "CODE"` in tools/result.go, `const Name
 * tools.Code = "CODE"` in package mcp) and the nextStep table of
 * mcp/result.go (`tools.Name: "text",` or `Name: "text",`). codeSources
 * are the texts of the files that declare codes. Throws when a code or the
 * table is missing, so that a change of those files fails the generator
 * and the test.
 */
export function nextStepsFromGo(codeSources: string[], mcpResultGo: string): Record<string, string> {
  const codes = new Map<string, string>();
  for (const src of codeSources) {
    for (const m of src.matchAll(/^\s*(?:const\s+)?(\w+)\s+(?:tools\.)?Code\s*=\s*"([A-Z_]+)"/gm)) { codes.set(m[1], m[2]); }
  }
  const table = /var nextStep = map\[tools\.Code\]string\{\n([\s\S]*?)\n\}/.exec(mcpResultGo);
  if (codes.size === 0 || !table) { throw new Error('no error codes in the Go sources or no nextStep table in mcp/result.go'); }
  const out: Record<string, string> = {};
  for (const line of table[1].split('\n')) {
    const m = /^\s*(?:tools\.)?(\w+):\s*("(?:[^"\\]|\\.)*"),\s*$/.exec(line);
    if (!m) { throw new Error(`mcp/result.go: a nextStep line this reader does not know: ${line.trim()}`); }
    const code = codes.get(m[1]);
    if (!code) { throw new Error(`mcp/result.go: ${m[1]} is not a code declared in the Go sources read`); }
    out[code] = JSON.parse(m[2]) as string;
  }
  return out;
}

/** The text of src/core/nextSteps.ts for a table. */
export function nextStepsModule(steps: Record<string, string>): string {
  const body = Object.entries(steps).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`).join('\n');
  return `// Generated by gen-lm-tools.mjs from mcp/result.go (nextStep): do not edit.\n\n` +
    `/** What the model should do after each error code. */\nexport const nextSteps: Record<string, string> = {\n${body}\n};\n`;
}

/** The Go files that declare error codes: tools/result.go and package mcp's sources (tests left out). */
export function goCodeSources(repoRoot: string): string[] {
  const mcp = path.join(repoRoot, 'mcp');
  return [path.join(repoRoot, 'tools', 'result.go'),
    ...fs.readdirSync(mcp).filter(f => f.endsWith('.go') && !f.endsWith('_test.go')).sort().map(f => path.join(mcp, f))];
}
