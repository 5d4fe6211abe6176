// Regenerates the server settings of contributes.configuration in
// package.json from the server's config schema
// (workspace/config.schema.json). test/core.test.ts checks that they
// agree.  Usage: node gen-settings.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { settingsFromSchema } = require('./out/src/core/settings.js');
const schema = JSON.parse(readFileSync(new URL('../../workspace/config.schema.json', import.meta.url)));
const pkgUrl = new URL('./package.json', import.meta.url);
const pkg = JSON.parse(readFileSync(pkgUrl));
const props = pkg.contributes.configuration.properties;
const { ExtensionOnlySettings } = require("./out/src/core/settings.js");
const own = Object.fromEntries(Object.entries(props).filter(([k]) => ExtensionOnlySettings.includes(k.replace(/^agentls\./, ""))));
pkg.contributes.configuration.properties = { ...own, ...settingsFromSchema(schema) };
writeFileSync(pkgUrl, JSON.stringify(pkg, null, 2) + '\n');
console.log(`${Object.keys(pkg.contributes.configuration.properties).length} settings`);
