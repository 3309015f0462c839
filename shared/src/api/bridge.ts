/** Wire types of the tool bridge (GET /mcp/tools, POST /mcp/call) and the loopback MCP status routes. */
import type { ToolClass } from './config.js';

/** An argument object schema (JSON Schema with `type: "object"`). */
export type ToolInputSchema = { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };

/** One entry of the catalog a caller may use. */
export interface BridgeTool {
  /** The exposed name, `<service>_<tool>`; the name to send to POST /mcp/call. */
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
}

/** GET /mcp/tools */
export interface BridgeToolList {
  tools: BridgeTool[];
}

/** POST /mcp/call */
export interface BridgeCallRequest {
  name: string;
  arguments?: Record<string, unknown>;
}

/** One content block of a tool result (MCP `ContentBlock`: text, image, audio, resource_link, resource). */
export type ToolContent = { type: string; [key: string]: unknown };

/** POST /mcp/call answers the MCP `CallToolResult`; a failing or timed-out tool is `isError: true`, not an HTTP error. */
export interface BridgeCallResult {
  content: ToolContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export type McpServiceState = 'disconnected' | 'connecting' | 'connected' | 'failed';

/**
 * Where a service failed: sign-in or credentials refused (authentication), no catalog within
 * discovery_timeout_ms (discovery_timeout), an empty catalog (zero_tools), unusable tool schemas
 * (schema), the process or connection (transport), settings that cannot be used, such as an unset
 * secret (configuration), or a tool call the service refused (execution_denied).
 */
export type McpFailureLayer = 'authentication' | 'discovery_timeout' | 'zero_tools' | 'schema' | 'transport' | 'configuration' | 'execution_denied';

/** A tool as the owner sees it: every discovered tool, with its class and whether external clients see it. */
export interface McpToolStatus {
  /** Exposed name, `<service>_<tool>` (made safe, disambiguated). */
  name: string;
  /** The service's own name for it. */
  tool: string;
  class: ToolClass;
  /** Shown to external clients (bridge, /mcp) under the service's `expose`. */
  exposed: boolean;
}

/** The last tool call of a service that failed, with its layer (timeouts are `transport`). */
export interface McpCallFailure {
  tool: string;
  layer: McpFailureLayer | 'tool_error' | 'timeout';
  message: string;
  at: string;
}

/** GET /admin/mcp/services: one entry per configured service. Never contains a secret value. */
export interface McpServiceStatus {
  name: string;
  transport: 'stdio' | 'http';
  enabled: boolean;
  auto_connect: boolean;
  expose: 'none' | 'read' | 'all';
  state: McpServiceState;
  /** Set when state is failed. */
  layer: McpFailureLayer | null;
  message: string | null;
  /** When the state last changed (ISO 8601). */
  since: string;
  /** HTTP services: the protocol actually in use once connected. */
  protocol: 'stdio' | 'streamable-http' | 'sse' | null;
  /** stdio services: the process id while one runs. */
  pid: number | null;
  server: { name: string; version: string } | null;
  auth: { type: 'none' | 'token' | 'headers' | 'oauth'; signed_in?: boolean };
  /** Consecutive failed attempts; a retry is scheduled for transport failures and discovery timeouts. */
  attempts: number;
  next_retry_at: string | null;
  tools: McpToolStatus[];
  warnings: string[];
  last_call_error: McpCallFailure | null;
}

export interface McpServiceList {
  services: McpServiceStatus[];
}

/** POST /admin/mcp/services/{name}/login: open authorization_url in a browser on this machine. */
export interface McpLoginStart {
  service: string;
  authorization_url: string;
  redirect_uri: string;
}
