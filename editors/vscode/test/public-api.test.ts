// The extension builds on the public APIs only: the `vscode` module as
// @types/vscode declares it (no proposed API) and vscode-languageclient's
// documented entry points (no lib/ internals, no private `_` members reached
// through casts). A check of the sources, so that a VS Code or
// vscode-languageclient release can change its internals without breaking us.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/** Modules the extension may import: the documented entry points and node's own. */
const allowedImports = [
  /^vscode$/,
  /^vscode-languageclient(\/node)?$/,
  /^\.{1,2}\//,
  /^(node:)?(fs|path|os|child_process|crypto|util|events)$/,
];

/** What is private or proposed, with why. */
const forbidden: [RegExp, string][] = [
  [/\bas\s+any\b/, 'a cast to any (reaches past the typed API)'],
  [/\bas\s+unknown\s+as\b/, 'a double cast (reaches past the typed API)'],
  [/[\w)\]]\s*\??\.\s*_[A-Za-z]/, 'a private member (x._name)'],
  [/\[\s*['"`]_[A-Za-z]/, 'a private member (x["_name"])'],
  [/vscode\.proposed|enabledApiProposals/, 'a proposed VS Code API'],
];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) { out.push(...sources(p)); } else if (/\.ts$/.test(e.name)) { out.push(p); }
  }
  return out.sort();
}

/** The violations of one source text: "file:line: why: text". */
function violations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
    for (const m of code.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)) {
      if (!allowedImports.some(re => re.test(m[1]))) {
        found.push(`${file}:${i + 1}: an import that is not a documented entry point (${m[1]}): ${line.trim()}`);
      }
    }
    for (const [re, why] of forbidden) {
      if (re.test(code)) { found.push(`${file}:${i + 1}: ${why}: ${line.trim()}`); }
    }
  });
  return found;
}

test('the check finds each kind of private access', () => {
  const samples = [
    "import { x } from 'vscode-languageclient/lib/common/client';",
    "const c = require('vscode-jsonrpc/lib/common/connection');",
    'const n = (client as any)._connection;',
    'const n = client._state;',
    "const n = client['_connection'];",
    'return this.client as unknown as Rpc;',
    'vscode.proposed.d.ts',
  ];
  for (const s of samples) {
    assert.notDeepEqual(violations('sample.ts', s), [], `a violation in ${s}`);
  }
  assert.deepEqual(violations('sample.ts', "import * as vscode from 'vscode';"), []);
  assert.deepEqual(violations('sample.ts', "import { LanguageClient } from 'vscode-languageclient/node';"), []);
  assert.deepEqual(violations('sample.ts', '// (client as any)._connection in a comment'), []);
});

test('src/ uses only public vscode and vscode-languageclient API', () => {
  const files = sources(path.join(root, 'src'));
  assert.ok(files.some(f => f.endsWith(path.join('src', 'extension.ts'))), `src/extension.ts among ${files.join(', ')}`);
  const found = files.flatMap(f => violations(path.relative(root, f), fs.readFileSync(f, 'utf8')));
  assert.deepEqual(found, []);
});

test('package.json asks for no proposed API', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.enabledApiProposals, undefined, 'enabledApiProposals');
  assert.match(pkg.engines?.vscode ?? '', /^\^?\d+\.\d+\.\d+$/, 'engines.vscode is a released version');
});
