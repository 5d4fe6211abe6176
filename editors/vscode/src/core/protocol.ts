// Wire types of the agentls protocol (docs/protocol.md). This module
// and everything under core/ must not import 'vscode': it is tested in plain
// node against the real server.

/** Method names of the agentls extensions to LSP. */
export const Methods = {
  toolList: 'tool/list',
  toolCall: 'tool/call',
  toolMetrics: 'tool/metrics',
  toolHistory: 'tool/history',
  toolEvent: 'tool/event',
  approvalRequest: 'approval/request',
  approvalRules: 'approval/rules',
} as const;

/** experimental.agentls in the client's capabilities. */
export interface AgentlsClientCapabilities {
  approvalRequest: boolean;
  saveAfterApply: boolean;
  nativePreview: boolean;
}

/** experimental.agentls in the server's InitializeResult. */
export interface AgentlsServerCapabilities {
  protocolVersion: number;
  tools: number;
}

export type ToolFormat = 'agentls' | 'openai' | 'anthropic' | 'mcp';

export interface ToolAnnotations {
  readOnly?: boolean;
  destructive?: boolean;
  dangerous?: boolean;
  approval?: 'auto' | 'ask' | 'conditional';
}

/** A ToolDefinition in the agentls format. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  aliases?: string[];
}

export type JsonSchema = { [key: string]: unknown };

export type ToolStatus = 'success' | 'error' | 'rejected' | 'cancelled';

export interface ToolError {
  code: string;
  message: string;
  recoverable?: boolean;
  details?: { violations?: Array<{ pointer: string; reason: string }> } & Record<string, unknown>;
}

/** ToolResult (docs/protocol.md, "ToolResult"). */
export interface ToolResult {
  callId: string;
  tool: string;
  status: ToolStatus;
  content: string;
  display?: string;
  structured?: any;
  error?: ToolError;
  message?: string;
  approvedBy?: 'auto' | 'user' | 'always' | 'config' | 'none';
  durationMs?: number;
}

export interface ToolCallParams {
  name: string;
  arguments: Record<string, unknown>;
  callId?: string;
  reason?: string;
  agent?: string;
  workDoneToken?: string | number;
  partialResultToken?: string | number;
}

export type Risk = 'read' | 'write' | 'execute' | 'network' | 'dangerous' | '';

export interface FilePreview {
  path: string;
  uri?: string;
  newPath?: string;
  operation: 'create' | 'modify' | 'delete' | 'rename' | string;
  oldText?: string;
  newText?: string;
}

export interface ApprovalRequest {
  callId: string;
  tool: string;
  arguments: Record<string, unknown> | null;
  reason?: string;
  risk: Risk;
  warning?: string;
  preview?: { unifiedDiff: string; files: FilePreview[] };
  /** Exactly the answers the person may give; "always" never for a dangerous call. */
  options: string[];
  /** What "always" covers, in words (present when options holds "always"). */
  alwaysLabel?: string;
  /** Who asks (the call's agent), when known. */
  agent?: string;
  /** The absolute folder a command runs in (shell_exec, shell_background, run_code). */
  cwd?: string;
  /** When the server rejects the request by itself (RFC 3339, UTC, milliseconds). */
  expiresAt?: string;
  /** How many milliseconds of that were left when the server sent the request. */
  timeoutMs?: number;
  /** The older spelling of the deadline: expiresAt to the second, and the configured timeout. */
  deadline?: string;
  timeoutSeconds?: number;
}

/** A remembered "always" answer (approval/rules). */
export interface ApprovalRule {
  id: string;
  tool: string;
  key: string;
  label: string;
  persisted: boolean;
}

/** The result of approval/rules. */
export interface ApprovalRulesResult {
  rules: ApprovalRule[];
  removed?: boolean;
}

export type Decision = 'approve' | 'reject' | 'always';

export interface ApprovalResponse {
  decision: Decision;
  message?: string;
  modifiedArguments?: Record<string, unknown>;
}

export type ToolEventKind = 'call' | 'awaitingApproval' | 'progress' | 'result' | 'fileChanged';

export interface ToolEvent {
  callId: string;
  tool: string;
  kind: ToolEventKind | string;
  arguments?: unknown;
  needsApproval?: boolean;
  message?: string;
  percent?: number;
  status?: ToolStatus;
  path?: string;
  operation?: string;
  risk?: string;
  /** The call's agent (kind call), when known. */
  agent?: string;
}

/** The value of a $/progress notification on a workDoneToken. */
export type WorkDoneProgressValue =
  | { kind: 'begin'; title: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'end'; message?: string };

/** The public API of the extension: what activate() returns. */
export interface AgentlsApi {
  /** The tools the server offers (tool/list). */
  listTools(options?: { format?: ToolFormat; agent?: string }): Promise<ToolDefinition[]>;
  /** Runs a tool (tool/call). Approvals are asked of the person in the editor. */
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
}

export interface CallOptions {
  callId?: string;
  reason?: string;
  agent?: string;
  /** Receives the streamed output ($/progress messages) of the call. */
  onProgress?: (value: WorkDoneProgressValue) => void;
  /** Receives partial results ($/progress on the call's partialResultToken: grep's batches of matches). */
  onPartialResult?: (value: unknown) => void;
  /** A token whose cancellation cancels the call ($/cancelRequest). */
  token?: CancellationTokenLike;
}

export interface CancellationTokenLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}
