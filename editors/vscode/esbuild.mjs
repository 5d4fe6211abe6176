// Bundles the extension with its runtime dependencies (vscode-languageclient)
// into one file, so the .vsix needs no node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'out/bundle/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  sourcemap: true,
  minify: true,
  keepNames: true,
  logLevel: 'warning',
});
