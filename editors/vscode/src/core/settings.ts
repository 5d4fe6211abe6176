// VS Code settings under agentls.* hold the server's configuration (the
// shape of workspace/config.schema.json) plus a few settings of the
// extension itself, which are never sent to the server.

/** Settings of the extension, not of the server (dotted, without the agentls. prefix). */
export const ExtensionOnlySettings = ['server.path', 'server.args', 'approval.nativePreview', 'agent', 'trace.server'];

/**
 * Builds settings.agentls (and initializationOptions.config) from the
 * settings a person set explicitly: dotted keys without the agentls. prefix
 * → nested object. Unset settings (undefined) are left to the server's
 * defaults and config files.
 */
export function serverConfig(explicit: Array<[key: string, value: unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of explicit) {
    if (value === undefined || ExtensionOnlySettings.includes(key)) { continue; }
    const parts = key.split('.');
    let o = out;
    for (const p of parts.slice(0, -1)) {
      if (typeof o[p] !== 'object' || o[p] === null) { o[p] = {}; }
      o = o[p] as Record<string, unknown>;
    }
    o[parts[parts.length - 1]] = value;
  }
  return out;
}

type Schema = { [k: string]: any };

/**
 * The contributes.configuration.properties that mirror the server's config
 * schema: one setting per property of each top-level object (agentls.shell.allow),
 * one per top-level key that is not an object of known properties
 * (agentls.agents, agentls.custom). $refs are inlined: VS Code's settings
 * editor does not resolve them.
 */
export function settingsFromSchema(schema: Schema): Record<string, Schema> {
  const defs = (schema.$defs ?? schema.definitions ?? {}) as Record<string, Schema>;
  const inline = (s: unknown): any => {
    if (Array.isArray(s)) { return s.map(inline); }
    if (s === null || typeof s !== 'object') { return s; }
    const o = s as Schema;
    if (typeof o.$ref === 'string') {
      const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(o.$ref);
      if (m && defs[m[1]]) { return inline({ ...defs[m[1]], ...withoutKey(o, '$ref') }); }
    }
    const r: Schema = {};
    for (const [k, v] of Object.entries(o)) { r[k] = inline(v); }
    return r;
  };
  const out: Record<string, Schema> = {};
  for (const [top, ts] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    if (top.startsWith('$')) { continue; }
    if (ts.type === 'object' && ts.properties && ts.additionalProperties === false) {
      for (const [k, ps] of Object.entries(ts.properties as Record<string, Schema>)) {
        out[`agentls.${top}.${k}`] = withDescription(inline(ps), `Server configuration \`${top}.${k}\` (see the agentls config schema).`);
      }
    } else {
      out[`agentls.${top}`] = withDescription(inline(ts), `Server configuration \`${top}\` (see the agentls config schema).`);
    }
  }
  return out;
}

function withoutKey(o: Schema, key: string): Schema {
  const r = { ...o };
  delete r[key];
  return r;
}

function withDescription(s: Schema, fallback: string): Schema {
  const r = { ...s };
  if (!r.description && !r.markdownDescription) { r.markdownDescription = fallback; }
  // No default: an unset setting leaves the value to the server and its config files.
  delete r.default;
  return r;
}
