// End-to-end tests of the agentls extension in real VS Code (code-server),
// driven in headless Debian Chromium by playwright-core, the way a person
// uses it: the command palette, the editor, the diff view, the Refactor
// Preview, notifications, the output panel, and VS Code's own agents
// calling the tools through vscode.lm. Run by scripts/vscode-e2e.sh,
// which starts code-server and sets the environment read below.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) { throw new Error(`${k} is not set: run this suite through scripts/vscode-e2e.sh`); }
  return v;
};
const url = env('CODE_SERVER_URL');
const ws = env('E2E_WORKSPACE');
const io = env('E2E_IO');
const shots = env('E2E_SHOTS');
const userSettings = env('E2E_USER_SETTINGS');
const userData = env('E2E_USER_DATA');

let browser;
let page;
let shotN = 0;
let reqN = 0;

const sleep = (ms) => new Promise(r => setTimeout(r, ms));

async function shot(name) {
  await page.mouse.move(1000, 450); // no hover tooltip in the picture
  const file = path.join(shots, `${String(++shotN).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
  return file;
}

async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) { return v; }
    if (Date.now() > end) { throw new Error(`timed out after ${ms} ms waiting for ${what}`); }
    await sleep(100);
  }
}

/**
 * Opens the quick input (F1), types text in it (">label": a command; a
 * name: Quick Open's files) and waits for a row that shows label.
 */
async function quickInput(text, label) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(text);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ state: 'visible', timeout: 10000 });
  return row;
}

/** Runs a command from the command palette (F1), by its label. */
async function palette(label) {
  await (await quickInput(`>${label}`, label)).click();
}

/** Opens a workspace file in an editor through Quick Open. */
async function openFile(name) {
  await quickInput(name, name);
  await page.keyboard.press('Enter');
  await activeTab(name);
}

async function activeTab(label) {
  const tab = page.locator('.tabs-container .tab.active', { hasText: label });
  await tab.waitFor({ state: 'visible', timeout: 15000 });
  return tab;
}

/** The text of every visible editor (Monaco renders spaces as U+00A0). */
async function editorTexts() {
  const texts = await page.locator('.monaco-editor .view-lines').allInnerTexts();
  return texts.map(t => t.replace(/\u00a0/g, ' '));
}

async function waitEditorText(needle, ms = 15000) {
  return waitFor(async () => (await editorTexts()).find(t => t.includes(needle)), ms, `an editor showing "${needle}"`);
}

/**
 * The agent front-end: asks the test driver extension to call the agentls
 * extension's public API (callTool), or with via "lm" to invoke a language
 * model tool as VS Code's agents do (vscode.lm.invokeTool). Returns a
 * promise of the result.
 */
async function agentCall(name, args, via = 'api') {
  const id = `r${++reqN}`;
  fs.writeFileSync(path.join(io, 'request.json'), JSON.stringify({ id, name, arguments: args, via }));
  await palette('Agent E2E: Call Tool From Request File');
  const file = path.join(io, `result-${id}.json`);
  return {
    id,
    result: async (ms = 60000) => {
      await waitFor(() => fs.existsSync(file), ms, `the result of ${name} (${id})`);
      const r = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (!r.ok) { throw new Error(`the driver failed: ${r.error}`); }
      return r.result;
    },
  };
}

/** Invokes agentls's language model tool for tool (agentls_<tool>) through vscode.lm. */
function lmCall(tool, args) {
  return agentCall(`agentls_${tool}`, args, 'lm');
}

/** Picks tool in "Agent Tools: Run Tool…" and waits for the box of its arguments. */
async function runToolArguments(tool) {
  await palette('Agent Tools: Run Tool…');
  await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Agent Tools: Run Tool' }).waitFor();
  await page.locator('.quick-input-widget .quick-input-box input').fill(tool);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: tool }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget .quick-input-title', { hasText: `Arguments of ${tool}` }).waitFor();
}

/** Waits until the "Agent Tools" log matches re; returns the log. */
async function waitLog(re, ms = 10000) {
  return waitFor(() => { const l = agentToolsLog(); return re.test(l) && l; }, ms, `the Agent Tools log to match ${re}`);
}

function writeWs(name, text) {
  fs.writeFileSync(path.join(ws, name), text);
}

function readWs(name) {
  return fs.readFileSync(path.join(ws, name), 'utf8');
}

/** The "Agent Tools" output channel's log file (VS Code mirrors output channels to disk). */
function agentToolsLog() {
  const logs = path.join(userData, 'logs');
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { walk(p); } else if (e.name.endsWith('Agent Tools.log')) { found.push(p); }
    }
  };
  if (fs.existsSync(logs)) { walk(logs); }
  return found.map(f => fs.readFileSync(f, 'utf8')).join('\n');
}

/**
 * Turns agentls.approval.nativePreview on or off in the Settings editor, as a
 * person would, and waits for the extension to restart the server with it.
 */
async function setNativePreview(on) {
  const connected = () => (agentToolsLog().match(/connected to agentls/g) ?? []).length;
  const before = connected();
  await palette('Preferences: Open Settings (UI)');
  const search = page.locator('.settings-editor .suggest-input-container textarea, .settings-editor .settings-header .monaco-editor textarea').first();
  await search.waitFor({ state: 'attached' });
  await page.waitForTimeout(500);
  await page.keyboard.type('agentls.approval.nativePreview');
  // Until the search has settled, other settings (chat.agent.enabled…) are listed and re-rendered.
  await page.locator('.settings-editor .settings-count-widget', { hasText: /^\d Settings? Found$/ }).waitFor({ timeout: 30000 });
  const cb = page.locator('.settings-editor .setting-item-bool', { hasText: 'Native Preview' }).locator('.setting-value-checkbox').first();
  await cb.waitFor({ state: 'visible' });
  if ((await cb.getAttribute('aria-checked')) !== String(on)) {
    await cb.click();
  }
  await waitFor(async () => (await cb.getAttribute('aria-checked')) === String(on), 15000, 'the checkbox');
  if (on) { await shot('settings-native-preview'); }
  await waitFor(() => connected() > before, 30000, `the server restarted with nativePreview ${on}`);
  assert.match(agentToolsLog(), new RegExp(`native preview: ${on}`));
  await closeAllEditors();
}

/** Sets a text or number setting in the Settings editor (found by query, its row by label), as a person would. */
async function setSetting(query, label, value) {
  await palette('Preferences: Open Settings (UI)');
  await page.locator('.settings-editor').waitFor();
  await sleep(500);
  await page.keyboard.press('Control+A'); // an earlier search
  await page.keyboard.type(query);
  const input = page.locator('.settings-editor .setting-item-contents', { hasText: label }).locator('input').first();
  await input.waitFor({ state: 'visible' });
  await input.fill(value);
  await input.press('Enter');
  await waitFor(() => { try { return JSON.parse(fs.readFileSync(userSettings, 'utf8'))[query] === Number(value); } catch { return false; } },
    15000, `${query} = ${value} in the user settings`);
  await sleep(1000); // the extension sends it to the server (didChangeConfiguration)
}

async function closeAllEditors() {
  await palette('View: Close All Editors');
  await palette('Notifications: Clear All Notifications');
  await sleep(300);
}

let toolNames = [];

/** Opens name, has the agent change oldString to newString in it (edit_file), and waits for the approval diff. */
async function proposeEdit(name, oldString, newString) {
  await openFile(name);
  const call = await agentCall('edit_file', { path: name, old_string: oldString, new_string: newString });
  await page.locator('.monaco-diff-editor').first().waitFor({ state: 'visible', timeout: 30000 });
  await activeTab('agent proposal');
  return call;
}

/** Fails when the server lists no tool name (agentls tools): the suite's
 * server is built from this repository, so a missing tool is a regression. */
function needTool(name) {
  assert.ok(toolNames.includes(name), `the server has no ${name} tool (agentls tools does not list it)`);
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  writeWs('notes.txt', 'saved text on disk\n');
  // Every file exists before the window opens (Quick Open's file index).
  writeWs('approve.txt', 'alpha\nbeta\ngamma\n');
  writeWs('reject.txt', 'keep me\n');
  writeWs('preview.txt', 'one\ntwo\n');
  writeWs('multi1.txt', 'm1\n');
  writeWs('lm-edit.txt', 'a draft line\n');
  writeWs('lm-reject.txt', 'keep it a draft\n');
  writeWs('lm-read.txt', 'read by the VS Code agent\n');
  writeWs('expire.txt', 'nobody answers\n');
  writeWs('move-me.txt', 'saved before the move\n');
  fs.mkdirSync(path.join(ws, 'junk'), { recursive: true });
  writeWs('junk/keep.txt', 'do not delete\n');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(20000);
  await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`, { timeout: 90000 });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90000 });
  await page.locator('.statusbar-item', { hasText: 'agentls' }).first().waitFor({ state: 'visible', timeout: 90000 });
  // The server is up when the API answers.
  const list = await agentCall('__list__', {});
  toolNames = (await list.result(60000)).map(t => t.name);
  console.log(`tools: ${toolNames.join(', ')}`);
});

after(async () => {
  await browser?.close();
});

describe('agentls in VS Code (code-server)', { concurrency: false }, () => {
  test('1. "Agent Tools: Run Tool…" lists the registry in a quick pick', { timeout: 90000 }, async () => {
    await palette('Agent Tools: Run Tool…');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Agent Tools: Run Tool' }).waitFor();
    const first = page.locator('.quick-input-widget .monaco-list-row').first();
    await first.waitFor();
    // The list is virtual: its rows say how many items it has.
    assert.equal(Number(await first.getAttribute('aria-setsize')), toolNames.length, 'one item per tool of the registry');
    // A row shows the name, the title and the description: the name comes first.
    const rows = await page.locator('.quick-input-widget .monaco-list-row').evaluateAll(
      els => els.map(e => e.querySelector('.label-name')?.textContent?.trim() ?? ''));
    assert.deepEqual(rows, [...toolNames].sort().slice(0, rows.length), 'the visible rows are the tools, by name');
    await shot('run-tool-quick-pick');
    for (const t of ['edit_file', 'read_file', 'write_file', 'shell_exec'].filter(n => toolNames.includes(n))) {
      await page.locator('.quick-input-widget .quick-input-box input').fill(t);
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: t }).first().waitFor();
    }
    await page.keyboard.press('Escape');
  });

  test('2. read_file from "Run Tool…" returns the unsaved text of an open editor', { timeout: 90000 }, async () => {
    await openFile('notes.txt');
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('unsaved line typed in the editor');
    await page.locator('.tabs-container .tab.active.dirty', { hasText: 'notes.txt' }).waitFor();
    assert.equal(readWs('notes.txt'), 'saved text on disk\n');

    await runToolArguments('read_file');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.fill('{"path": "notes.txt"}');
    await shot('run-tool-arguments');
    await page.keyboard.press('Enter');
    await activeTab('read_file-');
    const text = await waitEditorText('# read_file — success');
    assert.match(text, /unsaved line typed in the editor/);
    await shot('read-file-unsaved-result');

    // An invalid argument is shown clearly.
    await runToolArguments('read_file');
    await input.fill('{"path": 5}');
    await page.keyboard.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'invalid arguments for read_file' });
    await toast.waitFor();
    assert.match(await toast.innerText(), /\/path/);
    await sleep(600);
    await shot('run-tool-schema-error');

    // Leave notes.txt as it was.
    await page.locator('.tabs-container .tab', { hasText: 'notes.txt' }).click();
    await palette('File: Revert File');
    await page.locator('.tabs-container .tab.dirty', { hasText: 'notes.txt' }).waitFor({ state: 'detached' });
    await closeAllEditors();
  });

  test('3a. the agent edits a file: the approval diff opens; Approve → the editor shows it and disk has it', { timeout: 120000 }, async () => {
    const call = await proposeEdit('approve.txt', 'beta', 'BETA (edited by the agent)');
    await page.locator('.statusbar-item', { hasText: 'agentls: 1 waiting' }).waitFor();
    // The notification that goes with the diff, with the same actions as the diff's title bar.
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'edit_file wants to modify approve.txt' });
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).waitFor({ state: 'visible' });
    await sleep(600); // the toast's fade-in
    await shot('approval-diff');
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).click();
    const r = await call.result();
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(r.structured.applied_by, 'editor');
    assert.deepEqual(r.structured.unsaved, []);
    await activeTab('approve.txt');
    await waitEditorText('BETA (edited by the agent)');
    await waitFor(() => readWs('approve.txt') === 'alpha\nBETA (edited by the agent)\ngamma\n', 10000, 'approve.txt saved on disk');
    assert.equal(await page.locator('.tabs-container .tab.dirty', { hasText: 'approve.txt' }).count(), 0, 'approve.txt is saved');
    await page.locator('.statusbar-item', { hasText: 'agentls: 1 waiting' }).waitFor({ state: 'detached' });
    await shot('approved-edit-in-editor');
    await closeAllEditors();
  });

  test('3b. Reject (with a message) → nothing changes and the result says rejected', { timeout: 120000 }, async () => {
    const call = await proposeEdit('reject.txt', 'keep me', 'lost');
    // This time through the diff editor's title bar.
    await page.locator('.editor-actions .action-label[aria-label="Reject…"]').first().click();
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await page.locator('.quick-input-widget', { hasText: 'Tell the agent why' }).waitFor();
    await input.fill('keep the wording');
    await shot('reject-with-message');
    await page.keyboard.press('Enter');
    const r = await call.result();
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    assert.match(JSON.stringify(r), /keep the wording/);
    assert.equal(readWs('reject.txt'), 'keep me\n');
    await activeTab('reject.txt');
    await waitEditorText('keep me');
    assert.equal(await page.locator('.tabs-container .tab.dirty', { hasText: 'reject.txt' }).count(), 0);
    await shot('rejected-nothing-changed');
    await closeAllEditors();
  });

  test('3c. a patch over two files opens a multi-file diff; "Always" approves it and the next patch does not ask', { timeout: 120000 }, async () => {
    needTool('apply_patch');
    const patch = [
      '--- a/multi1.txt', '+++ b/multi1.txt', '@@ -1 +1 @@', '-m1', '+M1 (patched)',
      '--- /dev/null', '+++ b/multi2.txt', '@@ -0,0 +1 @@', '+created by the patch', '',
    ].join('\n');
    const call = await agentCall('apply_patch', { patch });
    await activeTab('apply_patch: agent proposal');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'apply_patch wants to change 2 files' });
    const always = toast.locator('.monaco-button', { hasText: 'Always allow apply_patch' });
    await always.waitFor({ state: 'visible', timeout: 30000 });
    await sleep(1000);
    await shot('multi-file-approval');
    await always.click();
    // "Always" covers later calls too: a modal asks a second time.
    const confirm = page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Always allow apply_patch' });
    await confirm.waitFor({ state: 'visible', timeout: 30000 });
    await confirm.click();
    const r = await call.result();
    assert.equal(r.status, 'success', JSON.stringify(r));
    await waitFor(() => readWs('multi1.txt') === 'M1 (patched)\n', 10000, 'multi1.txt patched on disk');
    await waitFor(() => fs.existsSync(path.join(ws, 'multi2.txt')) && readWs('multi2.txt') === 'created by the patch\n', 10000, 'multi2.txt created on disk');
    await page.locator('.tabs-container .tab', { hasText: 'apply_patch: agent proposal' }).waitFor({ state: 'detached' });

    const asked = (agentToolsLog().match(/\[approval\] apply_patch/g) ?? []).length;
    const second = await agentCall('apply_patch', { patch: '--- a/multi2.txt\n+++ b/multi2.txt\n@@ -1 +1 @@\n-created by the patch\n+patched again, without asking\n' });
    const r2 = await second.result();
    assert.equal(r2.status, 'success', JSON.stringify(r2));
    await waitFor(() => readWs('multi2.txt') === 'patched again, without asking\n', 10000, 'multi2.txt patched again');
    await sleep(500);
    assert.equal((agentToolsLog().match(/\[approval\] apply_patch/g) ?? []).length, asked, 'no second approval request');
    await closeAllEditors();
  });

  test('3d. with agentls.approval.nativePreview the Refactor Preview opens; Discard → rejected', { timeout: 150000 }, async () => {
    await setNativePreview(true);
    try {
      await openFile('preview.txt');
      const call = await agentCall('edit_file', { path: 'preview.txt', old_string: 'two', new_string: 'TWO' });
      const discard = page.locator('.monaco-button', { hasText: 'Discard' }).first();
      await discard.waitFor({ state: 'visible', timeout: 30000 });
      await page.locator('.monaco-button', { hasText: 'Apply' }).first().waitFor({ state: 'visible' });
      await sleep(500);
      await shot('refactor-preview');
      await discard.click();
      const r = await call.result();
      assert.equal(r.status, 'rejected', JSON.stringify(r));
      assert.equal(readWs('preview.txt'), 'one\ntwo\n');
      await waitEditorText('two');
      assert.equal(await page.locator('.tabs-container .tab.dirty', { hasText: 'preview.txt' }).count(), 0);
      await shot('refactor-preview-discarded');
    } finally {
      await setNativePreview(false);
      await sleep(1500);
      await closeAllEditors();
    }
  });

  test('3e. move_file of an open file with unsaved text: the editor follows the file, its text still unsaved', { timeout: 120000 }, async () => {
    needTool('move_file');
    await openFile('move-me.txt');
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('unsaved line before the move');
    await page.locator('.tabs-container .tab.active.dirty', { hasText: 'move-me.txt' }).waitFor();
    const call = await agentCall('move_file', { from: 'move-me.txt', to: 'moved/move-me.txt' });
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'wants to rename move-me.txt' });
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).waitFor({ state: 'visible', timeout: 30000 });
    await sleep(600);
    await shot('move-approval');
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).click();
    const r = await call.result();
    assert.equal(r.status, 'success', JSON.stringify(r));
    assert.equal(r.structured.applied_by, 'editor', 'VS Code moved it (a RenameFile)');
    await waitFor(() => !fs.existsSync(path.join(ws, 'move-me.txt')), 10000, 'the old path to go');
    assert.equal(readWs('moved/move-me.txt'), 'saved before the move\n', 'the disk has the saved text: the unsaved text was not saved');
    // The editor visits the new path, dirty, with the unsaved text.
    const tab = page.locator('.tabs-container .tab.dirty', { hasText: 'move-me.txt' });
    await tab.waitFor();
    await tab.click();
    // The breadcrumbs of the active editor name its folder.
    await waitFor(async () => /moved/.test(await page.locator('.breadcrumbs-control').first().innerText()), 10000,
      'the breadcrumbs of the moved file to name moved/');
    await waitEditorText('unsaved line before the move');
    // The server reads the editor's document at the new path.
    const read = await (await agentCall('read_file', { path: 'moved/move-me.txt' })).result();
    assert.match(read.content, /unsaved line before the move/, JSON.stringify(read));
    await shot('moved-buffer-still-unsaved');
    await palette('File: Revert File');
    await page.locator('.tabs-container .tab.dirty', { hasText: 'move-me.txt' }).waitFor({ state: 'detached' });
    await closeAllEditors();
  });

  test('4. a shell command needing approval streams its output into the output channel', { timeout: 120000 }, async () => {
    needTool('shell_exec');
    const call = await agentCall('shell_exec', { command: 'echo e2e-first; sleep 1; echo e2e-second' });
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'shell_exec wants to run' });
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).waitFor({ state: 'visible', timeout: 30000 });
    assert.match(await toast.innerText(), /echo e2e-first; sleep 1; echo e2e-second/);
    await page.locator('.statusbar-item', { hasText: 'agentls: 1 waiting' }).waitFor();
    await sleep(600);
    await shot('shell-approval-notification');
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).click();
    const r = await call.result();
    assert.equal(r.status, 'success', JSON.stringify(r));
    await palette('Agent Tools: Show Output');
    const text = await waitEditorText('e2e-second');
    assert.match(text, /e2e-first/);
    assert.match(text, /▶ shell_exec/);
    await shot('shell-output-channel');
  });

  test('5. a dangerous command is asked in a modal dialog with the server\'s warning; Reject → rejected', { timeout: 120000 }, async () => {
    needTool('shell_exec');
    await palette('View: Hide Panel');
    const call = await agentCall('shell_exec', { command: 'rm -r junk' });
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 30000 });
    const text = await dialog.innerText();
    assert.match(text, /shell_exec wants to run `rm -r junk`/);
    assert.match(text, /risk: dangerous/);
    assert.match(text, /WARNING: rm -r/);
    assert.doesNotMatch(text, /Always allow/, 'no "always" for a dangerous call');
    await sleep(400);
    await shot('dangerous-command-dialog');
    // Reject is the default button: Enter must not run it.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'Reject…', 'the focused (default) button');
    await dialog.locator('.monaco-button', { hasText: 'Reject…' }).click();
    await page.locator('.quick-input-widget', { hasText: 'Tell the agent why' }).waitFor();
    await page.keyboard.press('Enter');
    const r = await call.result();
    assert.equal(r.status, 'rejected', JSON.stringify(r));
    assert.equal(readWs('junk/keep.txt'), 'do not delete\n');
  });

  test('6a. VS Code\'s agents see every tool as a language model tool (vscode.lm.tools)', { timeout: 60000 }, async () => {
    const list = await (await agentCall('__list__', {}, 'lm')).result();
    const ours = list.filter(t => t.name.startsWith('agentls_'));
    assert.deepEqual(ours.map(t => t.name).sort(), toolNames.map(n => `agentls_${n}`).sort(), 'one language model tool per tool of the registry');
    const read = ours.find(t => t.name === 'agentls_read_file');
    assert.deepEqual(read.tags, ['agentls', 'read-only']);
    assert.ok(read.hasSchema, 'with its input schema');
  });

  test('6b. an edit by VS Code\'s agent (vscode.lm.invokeTool) is reviewed in the diff, naming the agent; Approve → it lands', { timeout: 120000 }, async () => {
    await openFile('lm-edit.txt');
    const call = await lmCall('edit_file', { path: 'lm-edit.txt', old_string: 'a draft line', new_string: 'the final line (by the VS Code agent)' });
    await page.locator('.monaco-diff-editor').first().waitFor({ state: 'visible', timeout: 30000 });
    await activeTab('agent proposal');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'VS Code agent (edit_file) wants to modify lm-edit.txt' });
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).waitFor({ state: 'visible' });
    // The review is the only question: neither VS Code nor the extension asks a confirmation of its own.
    assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'no confirmation dialog');
    await sleep(600);
    await shot('lm-tool-approval');
    await toast.locator('.monaco-button', { hasText: /^Approve$/ }).click();
    const r = await call.result();
    assert.equal(r.texts.length, 1, JSON.stringify(r));
    assert.doesNotMatch(r.texts[0], /^[A-Z_]+: /, `a success: ${r.texts[0]}`);
    await waitFor(() => readWs('lm-edit.txt') === 'the final line (by the VS Code agent)\n', 10000, 'lm-edit.txt saved on disk');
    await waitLog(/\[lm\] VS Code agent calls edit_file/);
    await waitLog(/\[approval\] .*VS Code agent wants to run edit_file/);
    await waitLog(/edit_file tc_\S+ call by VS Code agent/);
    await closeAllEditors();
  });

  test('6c. a rejection of VS Code\'s agent\'s edit returns the person\'s message to it', { timeout: 120000 }, async () => {
    const call = await lmCall('edit_file', { path: 'lm-reject.txt', old_string: 'keep it a draft', new_string: 'overwritten' });
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'VS Code agent (edit_file) wants to modify lm-reject.txt' });
    await toast.locator('.monaco-button', { hasText: 'Reject…' }).click({ timeout: 30000 });
    await page.locator('.quick-input-widget', { hasText: 'Tell the agent why' }).waitFor();
    await page.locator('.quick-input-widget .quick-input-box input').fill('it stays a draft');
    await page.keyboard.press('Enter');
    const r = await call.result();
    assert.match(r.texts[0], /^REJECTED: .*it stays a draft/);
    assert.match(r.texts[0], /\nnext: the call did not run/);
    assert.equal(readWs('lm-reject.txt'), 'keep it a draft\n');
    await closeAllEditors();
  });

  test('6d. a read-only tool invoked by VS Code\'s agent runs without a review', { timeout: 60000 }, async () => {
    const asked = (agentToolsLog().match(/\[approval\]/g) ?? []).length;
    const r = await (await lmCall('read_file', { path: 'lm-read.txt' })).result();
    assert.match(r.texts[0], /read by the VS Code agent/);
    await waitLog(/\[lm\] VS Code agent calls read_file/);
    assert.equal((agentToolsLog().match(/\[approval\]/g) ?? []).length, asked, 'no review');
    assert.equal(await page.locator('.statusbar-item', { hasText: 'waiting' }).count(), 0);
  });

  test('6e. a review counts down in the status bar and its notification, and closes by itself at the deadline', { timeout: 150000 }, async () => {
    // A short approval.timeoutSeconds, set in the Settings editor as a person would.
    await setSetting('agentls.approval.timeoutSeconds', 'Approval: Timeout Seconds', '8');
    try {
      const call = await proposeEdit('expire.txt', 'nobody answers', 'too late');
      const status = page.locator('.statusbar-item', { hasText: 'agentls: 1 waiting' });
      await status.waitFor({ state: 'visible', timeout: 10000 });
      const first = await status.innerText();
      assert.match(first, /agentls: 1 waiting · 0:0\d left/);
      await waitFor(async () => (await status.count()) === 0 || (await status.innerText()) !== first, 5000, 'the status bar to count down');
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'edit_file wants to modify expire.txt' });
      assert.match(await toast.innerText(), /0:0\d left \(rejected by itself at \d\d:\d\d:\d\d\)/);
      await shot('approval-countdown');
      // At the deadline: the diff closes, the person is told, nothing waits.
      const expired = page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls: review expired' });
      await expired.waitFor({ state: 'visible', timeout: 20000 });
      assert.match(await expired.innerText(), /review expired — edit_file expire\.txt/);
      await page.locator('.tabs-container .tab', { hasText: 'agent proposal' }).waitFor({ state: 'detached', timeout: 10000 });
      await page.locator('.statusbar-item', { hasText: 'waiting' }).waitFor({ state: 'detached', timeout: 10000 });
      await sleep(400);
      await shot('approval-expired');
      // The question's notification outlives it (VS Code cannot take it back): a late Approve says so and runs nothing.
      await toast.locator('.monaco-button', { hasText: /^Approve$/ }).click();
      await page.locator('.notifications-toasts .notification-toast', { hasText: 'no longer waits for an answer' }).waitFor({ state: 'visible', timeout: 10000 });
      const r = await call.result();
      assert.equal(r.status, 'rejected', JSON.stringify(r));
      assert.match(r.content, /no answer within/, 'the server\'s own rejection');
      assert.equal(readWs('expire.txt'), 'nobody answers\n');
      await waitLog(/\[approval\] edit_file tc_\S+: expired/);
    } finally {
      await closeAllEditors();
      await setSetting('agentls.approval.timeoutSeconds', 'Approval: Timeout Seconds', '300');
      await closeAllEditors();
    }
  });

  test('7. a missing server binary is reported clearly, with a way to the setting', { timeout: 120000 }, async () => {
    const connected = () => (agentToolsLog().match(/connected to agentls/g) ?? []).length;
    await palette('Preferences: Open Settings (UI)');
    await page.locator('.settings-editor').waitFor();
    await sleep(500);
    await page.keyboard.type('agentls.server.path');
    const input = page.locator('.settings-editor .setting-item-contents', { hasText: 'Server: Path' }).locator('input').first();
    await input.waitFor({ state: 'visible' });
    const original = await input.inputValue();
    await input.fill('/nonexistent/agentls');
    await input.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'was not found' });
    await toast.waitFor({ state: 'visible', timeout: 30000 });
    assert.match(await toast.innerText(), /\/nonexistent\/agentls/);
    await toast.locator('.monaco-button', { hasText: 'Open Settings' }).waitFor();
    await page.locator('.statusbar-item', { hasText: 'agentls' }).first().waitFor();
    await sleep(600);
    await shot('missing-server-binary');
    const before = connected();
    await input.fill(original);
    await input.press('Enter');
    await waitFor(() => connected() > before, 30000, 'the server to start again');
    await closeAllEditors();
  });
});
