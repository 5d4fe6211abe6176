// Regenerates what the extension offers VS Code's agents from the server:
// contributes.languageModelTools in package.json from the registry
// (`agentls tools`, run with no configuration of the person's or of a
// repository), and src/core/nextSteps.ts from mcp/result.go (the codes
// from tools/result.go and package mcp).
// test/lmTools.test.ts fails when either is out of date. Run after
// `npm run compile`:
//   node gen-lm-tools.mjs            (builds agentls with go, or takes $AGENTLS_BIN)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const require = createRequire(import.meta.url);
const { lmToolContributions, nextStepsFromGo, nextStepsModule, goCodeSources } = require('./out/src/core/lmTools.js');

const repo = new URL('../../', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'agentls-gen-lm-tools-'));
try {
  let bin = process.env.AGENTLS_BIN;
  if (!bin) {
    bin = join(tmp, 'agentls-bin');
    execFileSync('go', ['build', '-o', bin, './cmd/agentls'], { cwd: repo, stdio: 'inherit' });
  }
  // An empty folder and config home: the built-in registry only.
  const defs = JSON.parse(execFileSync(bin, ['tools'], { cwd: tmp, env: { ...process.env, XDG_CONFIG_HOME: tmp }, encoding: 'utf8' }));
  const pkgUrl = new URL('./package.json', import.meta.url);
  const pkg = JSON.parse(readFileSync(pkgUrl, 'utf8'));
  pkg.contributes.languageModelTools = lmToolContributions(defs);
  writeFileSync(pkgUrl, JSON.stringify(pkg, null, 2) + '\n');
  const steps = nextStepsFromGo(goCodeSources(repo).map(f => readFileSync(f, 'utf8')), readFileSync(join(repo, 'mcp/result.go'), 'utf8'));
  writeFileSync(new URL('./src/core/nextSteps.ts', import.meta.url), nextStepsModule(steps));
  console.log(`${defs.length} language model tools, ${Object.keys(steps).length} next steps`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
