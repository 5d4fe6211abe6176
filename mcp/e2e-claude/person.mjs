// The person at Claude Code, for the end-to-end test (claude.test.mjs).
// Claude Code in print mode has nobody to show an MCP elicitation to: it
// runs its Elicitation hooks (a command that may answer instead of the
// dialog) and, when no hook answers, cancels the question. This script is
// such a hook, configured through --settings: it records the question it
// was given and answers with the next answer of the test's list.
//
//   node person.mjs DIR
//     DIR/asked.jsonl   one line per question: the hook input (message,
//                       requested_schema, mcp_server_name…), appended
//     DIR/answers.json  [answer, …]: the Nth question gets the Nth; an
//                       answer is {action, content?} (MCP's ElicitResult)
//                       or null for no answer, so that Claude Code cancels
//                       the question as it does without a hook
let input = '';
for await (const chunk of process.stdin) input += chunk;
const fs = await import('node:fs');
const dir = process.argv[2];
fs.appendFileSync(`${dir}/asked.jsonl`, JSON.stringify(JSON.parse(input)) + '\n');
const n = fs.readFileSync(`${dir}/asked.jsonl`, 'utf8').trim().split('\n').length - 1;
const answer = JSON.parse(fs.readFileSync(`${dir}/answers.json`, 'utf8'))[n];
if (answer) process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'Elicitation', ...answer } }));
