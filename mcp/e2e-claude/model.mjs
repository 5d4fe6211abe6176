// The scripted model: the only fake part of the Claude Code end-to-end test
// (claude.test.mjs). An HTTP server on 127.0.0.1 that speaks the part of the
// Anthropic Messages API Claude Code uses (ANTHROPIC_BASE_URL points at it):
//
//   POST /v1/messages               streaming (SSE) or not, per `stream`
//   POST /v1/messages/count_tokens  a token count
//   anything else                   404 with an API error, recorded
//
// A request of the agent's main loop (its `tools` list holds the MCP tools
// of agentls) is answered from the script: the Nth answer of the loop is
// the script's step N (N = the assistant turns already in the request's
// messages, so a retried request gets the same answer), either `tool_use`
// blocks or, after the last step, a final text. The `tool_result` blocks of
// every request are recorded against the tool_use that asked for them: what
// the model was shown is what the test asserts on. Any other request (a
// title, a summary) gets a short text.
import http from 'node:http';

export const FINAL_TEXT = 'All steps done.';
const MCP_PREFIX = 'mcp__agentls__';

// startModel starts the server. steps: [[{name, input}, ...], ...], one
// array of tool calls per turn; name is the agentls tool's own name.
// onResult(result), when given, is called when a tool_result first
// arrives, before the model answers it (to look at the workspace then).
export async function startModel(steps, onResult) {
  const model = {
    steps,
    onResult,
    results: new Map(), // tool_use id -> {step, name, input, isError, text, raw}
    toolsSeen: null, // the tool definitions of the first main-loop request
    sideRequests: 0,
    unknown: [], // "METHOD /path" of requests outside the API above
    errors: [], // requests the script could not answer
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      try {
        handle(model, req, body, res);
      } catch (e) {
        model.errors.push(`${req.method} ${req.url}: ${e.stack}`);
        apiError(res, 500, 'api_error', String(e));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${server.address().port}`;
  model.close = () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); });
  return model;
}

// toolUseId is the id of the step's i-th call: stable, so a retried request
// gets the same ids.
const toolUseId = (step, i) => `toolu_e2e_${step}_${i}`;

function handle(model, req, raw, res) {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
    return json(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
  }
  if (req.method !== 'POST' || url.pathname !== '/v1/messages') {
    model.unknown.push(`${req.method} ${url.pathname}`);
    return apiError(res, 404, 'not_found_error', `the scripted model does not serve ${url.pathname}`);
  }
  const body = JSON.parse(raw);
  record(model, body.messages);
  const mainLoop = (body.tools || []).some((t) => t.name?.startsWith(MCP_PREFIX));
  let content;
  if (!mainLoop) {
    model.sideRequests++;
    content = [{ type: 'text', text: 'ok' }];
  } else {
    model.toolsSeen ??= body.tools;
    const step = body.messages.filter((m) => m.role === 'assistant').length;
    const calls = model.steps[step];
    content = calls
      ? calls.map((c, i) => ({ type: 'tool_use', id: toolUseId(step, i), name: MCP_PREFIX + c.name, input: c.input }))
      : [{ type: 'text', text: FINAL_TEXT }];
  }
  const message = {
    id: `msg_e2e_${Date.now()}`, type: 'message', role: 'assistant', model: body.model,
    content, stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null, usage: { input_tokens: Math.ceil(raw.length / 4), output_tokens: 10 },
  };
  if (body.stream) return stream(res, message);
  return json(res, 200, message);
}

// record keeps every tool_result of the request's messages that answers
// one of the script's tool_use blocks.
function record(model, messages) {
  for (const m of messages || []) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      const id = /^toolu_e2e_(\d+)_(\d+)$/.exec(b.tool_use_id || '');
      if (b.type !== 'tool_result' || !id) continue;
      if (model.results.has(b.tool_use_id)) continue;
      const call = model.steps[+id[1]]?.[+id[2]];
      const result = {
        step: +id[1], name: call?.name, input: call?.input, isError: b.is_error === true,
        text: textOf(b.content), raw: b.content,
      };
      model.results.set(b.tool_use_id, result);
      model.onResult?.(result);
    }
  }
}

// textOf is the text the model reads in a tool_result's content.
function textOf(content) {
  if (typeof content === 'string') return content;
  return (content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// stream sends the message as the Messages API's server-sent events.
function stream(res, message) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      event('content_block_start', { index, content_block: { ...block, input: {} } });
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    event('content_block_stop', { index });
  });
  event('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } });
  event('message_stop', {});
  res.end();
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function apiError(res, status, type, message) {
  json(res, status, { type: 'error', error: { type, message } });
}
