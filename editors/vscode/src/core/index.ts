// Everything of the extension that is not VS Code UI. No module under
// core/ may import 'vscode' (test/core.test.ts checks it).
export * from './protocol';
export * from './toolsClient';
export * from './approvals';
export * from './diffModel';
export * from './edits';
export * from './args';
export * from './settings';
export * from './log';
export * from './server';
export * from './lmTools';
export * from './nextSteps';
