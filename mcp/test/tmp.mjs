// Temporary folders of a test file: made in os.tmpdir() (TMPDIR) and
// removed after the file's tests, which must have stopped the servers
// that write in them by then.
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = [];

// tempDir returns a new folder (its real path) whose name starts with prefix.
export function tempDir(prefix) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
