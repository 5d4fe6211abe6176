// The MCP client of the Neovim suite's attached test
// (editors/nvim/test/attached_spec.lua): the official TypeScript SDK's
// client runs a server command, names itself --name/--title in initialize,
// makes the calls given as a JSON array of {name, arguments}, one after the
// other, and prints each result on a line of its own as
// {"isError": bool, "text": "..."} (the text blocks joined). It exits 1 when
// the server cannot be started or a call fails at the protocol level.
//
//   node mcp/test/client.mjs --name N --title T --calls JSON -- COMMAND ARG...
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

function parse(argv) {
  const o = { name: 'mcp-client', title: undefined, calls: '[]', command: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') { o.command = argv.slice(i + 1); break; }
    if (a === '--name' || a === '--title' || a === '--calls') { o[a.slice(2)] = argv[++i]; continue; }
    throw new Error(`unknown argument ${a}`);
  }
  if (o.command.length === 0) throw new Error('no server command after --');
  return o;
}

try {
  const o = parse(process.argv.slice(2));
  const client = new Client({ name: o.name, title: o.title, version: '1' });
  // The whole environment: the SDK passes only a few variables by default,
  // and the server finds the editor's session through XDG_RUNTIME_DIR.
  await client.connect(new StdioClientTransport({ command: o.command[0], args: o.command.slice(1), env: { ...process.env }, stderr: 'inherit' }));
  for (const c of JSON.parse(o.calls)) {
    const res = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
    const text = (res.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('');
    process.stdout.write(JSON.stringify({ isError: res.isError === true, text }) + '\n');
  }
  await client.close();
} catch (e) {
  process.stderr.write(`mcp client: ${e?.stack ?? e}\n`);
  process.exit(1);
}
