import {
  AgentlsApi, ApprovalRulesResult, CallOptions, CancellationTokenLike, Methods, ToolDefinition, ToolFormat, ToolResult,
  WorkDoneProgressValue,
} from './protocol';

/**
 * The part of a JSON-RPC connection the tools client needs. Both
 * vscode-languageclient's LanguageClient and vscode-languageserver-protocol's
 * MessageConnection have this shape.
 */
export interface Rpc {
  sendRequest(method: string, params: unknown, token?: CancellationTokenLike): Promise<unknown>;
  // (called with two arguments when there is no token)
}

export interface Disposable { dispose(): void }

/**
 * Registers a handler for $/progress on a token the client chose. The
 * extension routes it through LanguageClient.onProgress (and so through
 * middleware.handleWorkDoneProgress); tests through the connection.
 */
export type ProgressRegistrar = (token: string, handler: (value: any) => void, kind: 'workDone' | 'partialResult') => Disposable;

let tokenSeq = 0;

/** A fresh workDoneToken, unique for the life of the process. */
export function newProgressToken(): string {
  tokenSeq++;
  return `agentls-${process.pid}-${Date.now().toString(36)}-${tokenSeq}`;
}

/** True for a token this module made. */
export function isAgentlsToken(token: unknown): token is string {
  return typeof token === 'string' && token.startsWith('agentls-');
}

/** LSP's RequestCancelled. */
export const RequestCancelled = -32800;

/**
 * The protocol client: tool/list and tool/call over an Rpc, with a
 * workDoneToken per call whose $/progress goes to the caller.
 */
export class ToolsClient implements AgentlsApi {
  constructor(private readonly rpc: () => Rpc, private readonly registerProgress?: ProgressRegistrar) {}

  async listTools(options: { format?: ToolFormat; agent?: string } = {}): Promise<ToolDefinition[]> {
    const res = await this.rpc().sendRequest(Methods.toolList, options) as { tools?: ToolDefinition[] } | null;
    return res?.tools ?? [];
  }

  /**
   * The remembered "always" answers of the session, persisted ones too
   * (approval/rules); with remove (a rule id), that one is revoked first
   * and removed says whether it existed.
   */
  async approvalRules(remove?: string): Promise<ApprovalRulesResult> {
    const res = await this.rpc().sendRequest(Methods.approvalRules, remove !== undefined ? { remove } : {}) as ApprovalRulesResult | null;
    return { rules: res?.rules ?? [], ...(res && typeof res.removed === 'boolean' ? { removed: res.removed } : {}) };
  }

  async callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<ToolResult> {
    if (typeof name !== 'string' || name === '') {
      throw new TypeError('callTool: the tool name is required');
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new TypeError('callTool: the arguments must be an object');
    }
    const params: Record<string, unknown> = { name, arguments: args };
    if (options.callId) { params.callId = options.callId; }
    if (options.reason) { params.reason = options.reason; }
    if (options.agent) { params.agent = options.agent; }
    const regs: Disposable[] = [];
    if (this.registerProgress) {
      const token = newProgressToken();
      params.workDoneToken = token;
      regs.push(this.registerProgress(token, v => options.onProgress?.(v as WorkDoneProgressValue), 'workDone'));
      if (options.onPartialResult) {
        const partial = newProgressToken();
        params.partialResultToken = partial;
        regs.push(this.registerProgress(partial, v => options.onPartialResult?.(v), 'partialResult'));
      }
    }
    try {
      // Without a token, pass none: vscode-jsonrpc would send an explicit
      // undefined as a second positional parameter.
      const rpc = this.rpc();
      const res = (options.token
        ? await rpc.sendRequest(Methods.toolCall, params, options.token)
        : await rpc.sendRequest(Methods.toolCall, params)) as ToolResult | undefined | null;
      if (res == null) {
        // vscode-languageclient answers a cancelled request with undefined.
        return cancelledResult(name, options.callId);
      }
      return res;
    } catch (err) {
      if ((err as { code?: number })?.code === RequestCancelled || options.token?.isCancellationRequested) {
        return cancelledResult(name, options.callId);
      }
      throw err;
    } finally {
      for (const r of regs) { r.dispose(); }
    }
  }
}

function cancelledResult(tool: string, callId?: string): ToolResult {
  return {
    callId: callId ?? '', tool, status: 'cancelled', content: 'cancelled',
    error: { code: 'CANCELLED', message: 'the call was cancelled', recoverable: true },
  };
}
