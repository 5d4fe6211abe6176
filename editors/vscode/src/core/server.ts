import * as fs from 'fs';
import * as path from 'path';

/**
 * Resolves the agentls binary: the setting as a path (absolute, or relative
 * to the first workspace folder), or a bare name looked up on PATH.
 * Returns undefined when there is no executable file there.
 */
export function resolveServer(setting: string | undefined, pathEnv = process.env.PATH ?? '', base?: string): string | undefined {
  const name = (setting ?? '').trim() || 'agentls';
  const isExec = (p: string) => {
    try {
      const st = fs.statSync(p);
      if (!st.isFile()) { return false; }
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (name.includes('/') || name.includes(path.sep)) {
    const p = path.isAbsolute(name) ? name : path.resolve(base ?? process.cwd(), name);
    return isExec(p) ? p : undefined;
  }
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!dir) { continue; }
    const p = path.join(dir, name);
    if (isExec(p)) { return p; }
  }
  return undefined;
}

/** The message shown when the binary is missing. */
export function missingServerMessage(setting: string | undefined): string {
  const name = (setting ?? '').trim() || 'agentls';
  return `agentls: the server binary "${name}" was not found${name.includes('/') ? '' : ' on PATH'}. ` +
    'Build it (go build -o ~/bin/agentls ./cmd/agentls) or set "agentls.server.path" to its full path.';
}
