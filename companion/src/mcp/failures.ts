import type { McpCallFailure, McpFailureLayer } from '#shared/api/bridge.js';
import { loadedSdk } from './sdk.js';

/** A failed connection attempt, with the layer that failed. */
export class ConnectFailure extends Error {
  constructor(
    readonly layer: McpFailureLayer,
    message: string,
  ) {
    super(message);
    this.name = 'ConnectFailure';
  }
}

/** The HTTP status an SDK transport error carries, if any. */
export function httpStatus(error: unknown): number | undefined {
  const sdk = loadedSdk();
  if (sdk && (error instanceof sdk.StreamableHTTPError || error instanceof sdk.SseError)) return error.code;
  return undefined;
}

/** The SDK's error for a refused credential (only the SDK makes one, so none exists before it loaded). */
function refusedCredentials(error: unknown): boolean {
  const sdk = loadedSdk();
  return sdk !== undefined && (error instanceof sdk.UnauthorizedError || error instanceof sdk.OAuthError);
}

/** The SDK's protocol error code (a timeout, a closed connection, refused parameters), if it is one. */
function protocolCode(error: unknown): 'timeout' | 'closed' | 'invalid_params' | 'other' | undefined {
  const sdk = loadedSdk();
  if (!sdk || !(error instanceof sdk.McpError)) return undefined;
  if (error.code === (sdk.ErrorCode.RequestTimeout as number)) return 'timeout';
  if (error.code === (sdk.ErrorCode.ConnectionClosed as number)) return 'closed';
  if (error.code === (sdk.ErrorCode.InvalidParams as number)) return 'invalid_params';
  return 'other';
}

/** Which layer an error from connecting belongs to, with a message for the owner. */
export function describeConnectError(error: unknown): ConnectFailure {
  const message = error instanceof Error ? error.message : String(error);
  const status = httpStatus(error);
  if (refusedCredentials(error) || status === 401 || status === 403) {
    return new ConnectFailure('authentication', `The service refused Hearth's credentials${status ? ` (HTTP ${status})` : ''}: ${message}`);
  }
  const protocol = protocolCode(error);
  if (protocol === 'timeout') return new ConnectFailure('discovery_timeout', `The service did not answer in time: ${message}`);
  if (protocol === 'closed') return new ConnectFailure('transport', 'The connection closed before the handshake and discovery completed.');
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'EACCES')
    return new ConnectFailure('configuration', `The command could not be started (${code}): ${message}. Check command, args and cwd.`);
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return new ConnectFailure('transport', `The service could not be reached (${cause.code}): ${cause.message ?? message}`);
  if (status) return new ConnectFailure('transport', `The service answered HTTP ${status}: ${message}`);
  return new ConnectFailure('transport', message);
}

/** Which layer a failed tool call belongs to. */
export function callFailure(error: unknown, service: string, tool: string, timeoutMs: number): { layer: McpCallFailure['layer']; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const protocol = protocolCode(error);
  if (protocol) {
    if (protocol === 'timeout')
      return {
        layer: 'timeout',
        message: `The tool "${tool}" of "${service}" did not answer within ${timeoutMs} ms (tool_call_timeout_ms); Hearth cancelled the call.`,
      };
    if (protocol === 'closed') return { layer: 'transport', message: `The service "${service}" closed the connection during the call of "${tool}".` };
    if (protocol === 'invalid_params') return { layer: 'schema', message: `The service "${service}" refused the call of "${tool}": ${message}` };
    return { layer: 'tool_error', message: `The service "${service}" answered the call of "${tool}" with an error: ${message}` };
  }
  const status = httpStatus(error);
  if (refusedCredentials(error) || status === 401 || status === 403) {
    return { layer: 'authentication', message: `The service "${service}" refused Hearth's credentials during the call of "${tool}": ${message}` };
  }
  // Raised on Hearth's side (a stack overflow while serialising): this call failed, the connection did not.
  if (error instanceof RangeError) {
    return { layer: 'tool_error', message: `The call of "${tool}" on "${service}" could not be made: ${message}` };
  }
  return { layer: 'transport', message: `The call of "${tool}" on "${service}" failed: ${message}` };
}
