import type { ErrorBody, ErrorCode, ErrorType } from '#shared/api/errors.js';
import { spellCommands } from './invocation.js';

interface ErrorRow {
  status: number;
  type: ErrorType;
  /** What the client sees when the thrower gives no message. */
  message: string;
}

/** The one error table: code -> HTTP status, OpenAI error type, default message. */
export const ERRORS: Record<ErrorCode, ErrorRow> = {
  invalid_request_error: { status: 400, type: 'invalid_request_error', message: 'The request is not valid.' },
  invalid_json: { status: 400, type: 'invalid_request_error', message: 'The request body is not valid JSON.' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error', message: "The prompt is longer than the model's context." },
  request_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  uri_too_long: { status: 414, type: 'invalid_request_error', message: 'A part of the path is too long (at most 100 characters between slashes).' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', message: 'Send the body as application/json.' },
  model_not_found: { status: 404, type: 'invalid_request_error', message: 'The model does not exist. List models with GET /v1/models.' },
  response_not_found: { status: 404, type: 'invalid_request_error', message: 'No stored response has this id.' },
  key_not_found: { status: 404, type: 'invalid_request_error', message: 'No access key has this id.' },
  host_not_allowed: { status: 403, type: 'permission_error', message: 'The Host header does not name this server.' },
  origin_not_allowed: { status: 403, type: 'permission_error', message: 'This origin is not allowed. Add it to server.cors.origins.' },
  config_invalid: { status: 400, type: 'invalid_request_error', message: 'The configuration document is not valid.' },
  confirmation_required: { status: 409, type: 'invalid_request_error', message: 'This change is high-risk. Confirm it with confirm_high_risk: true.' },
  memory_record_not_found: { status: 404, type: 'invalid_request_error', message: 'This agent has no memory record with this id.' },
  memory_index_removed: { status: 409, type: 'invalid_request_error', message: "This agent's memory index was removed; rebuild it first." },
  tool_not_found: { status: 404, type: 'invalid_request_error', message: 'No tool with this name is available. List tools with GET /mcp/tools.' },
  mcp_service_not_found: { status: 404, type: 'invalid_request_error', message: 'No MCP service has this name.' },
  // 400 wherever an agent is named (path, X-Service-Agent-Id): the id the caller sent is not in GET /agents.
  agent_not_found: { status: 400, type: 'invalid_request_error', message: 'No agent has this id. List agents with GET /agents.' },
  run_not_found: { status: 404, type: 'invalid_request_error', message: 'No agent run has this id.' },
  artifact_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'This run has no artifact with this id. Artifacts are listed in its artifact.created events.',
  },
  approval_not_found: { status: 404, type: 'invalid_request_error', message: 'No approval has this id. List pending ones with GET /agents/approvals.' },
  sign_in_request_not_found: {
    status: 404,
    type: 'invalid_request_error',
    message: 'No browser is waiting to be signed in with this code. Check the code the other browser shows.',
  },
  approval_decided: { status: 409, type: 'invalid_request_error', message: 'This approval was already decided or has expired.' },
  conversation_busy: {
    status: 409,
    type: 'invalid_request_error',
    message: 'A run of this conversation is in progress. Wait for it or cancel it, then continue the conversation.',
  },
  download_not_found: { status: 404, type: 'invalid_request_error', message: 'No model download has this id.' },
  download_conflict: { status: 409, type: 'invalid_request_error', message: 'The download is not in a state that allows this.' },
  model_read_only: {
    status: 409,
    type: 'invalid_request_error',
    message: "This model belongs to another app's folder; Hearth only removes models in its own models folder.",
  },
  range_not_satisfiable: { status: 416, type: 'invalid_request_error', message: 'The requested byte range is outside the file.' },
  route_not_found: { status: 404, type: 'invalid_request_error', message: 'No route matches this method and path.' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', message: 'This method is not allowed on this path.' },
  model_load_failed: { status: 500, type: 'server_error', message: 'The model could not be loaded.' },
  model_not_chat: { status: 400, type: 'invalid_request_error', message: 'This model cannot chat (it is an embedding model).' },
  model_not_embedding: { status: 400, type: 'invalid_request_error', message: 'This model does not produce embeddings (it is a chat model).' },
  invalid_api_key: { status: 401, type: 'authentication_error', message: 'A valid API key is required.' },
  admin_credential_required: {
    status: 401,
    type: 'authentication_error',
    message:
      'Admin routes need the local admin credential: Authorization: Bearer <the contents of admin-token in the data folder>, or the app signed in (hearth open prints a sign-in link).',
  },
  permission_denied: { status: 403, type: 'permission_error', message: 'This key may not use this route.' },
  upgrade_required: { status: 426, type: 'invalid_request_error', message: 'This route requires a secure channel.' },
  pairing_failed: { status: 403, type: 'permission_error', message: 'The pairing code was refused.' },
  fingerprint_mismatch: { status: 400, type: 'invalid_request_error', message: "The host's certificate does not have the fingerprint given." },
  device_not_paired: {
    status: 401,
    type: 'authentication_error',
    message: 'This connection carries no certificate of a paired device. Pair first: hearth remote add NAME URL --code CODE --fingerprint FP',
  },
  device_not_found: { status: 404, type: 'invalid_request_error', message: 'No paired device has this id.' },
  remote_disabled: { status: 409, type: 'invalid_request_error', message: 'The secure channel is off (server.remote.enabled).' },
  remote_host_not_found: { status: 404, type: 'invalid_request_error', message: 'No remote host has this name.' },
  remote_host_unreachable: { status: 502, type: 'server_error', message: 'The remote host could not be reached.' },
  remote_host_not_paired: { status: 409, type: 'invalid_request_error', message: 'This companion is not (or no longer) paired with the remote host.' },
  remote_host_refused: { status: 502, type: 'server_error', message: 'The remote host refused the request.' },
  remote_certificate_changed: {
    status: 502,
    type: 'server_error',
    message: 'The remote host presented a different certificate than the one pinned at pairing.',
  },
  cloud_workspace_not_found: { status: 404, type: 'invalid_request_error', message: 'No cloud workspace has this name.' },
  cloud_sign_in_required: { status: 409, type: 'invalid_request_error', message: 'Sign in to the cloud workspace first: hearth cloud login NAME' },
  cloud_workspace_mismatch: { status: 403, type: 'permission_error', message: 'The sign-in belongs to another account or workspace.' },
  cloud_agent_error: { status: 502, type: 'server_error', message: 'The cloud agent answered with an error.' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', message: 'Too many requests are waiting. Retry later.' },
  server_busy: { status: 503, type: 'server_error', message: 'The server is busy. Retry later.' },
  restart_unavailable: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This companion was not started by hearth serve, so it cannot restart itself. Stop it and start it again.',
  },
  data_folder_gone: {
    status: 503,
    type: 'server_error',
    message: 'The data folder was deleted or moved while Hearth was running, so nothing can be saved. Put it back, or restart Hearth to start with a new one.',
  },
  engine_crashed: {
    status: 503,
    type: 'server_error',
    message: "The model's engine process stopped during this request; it is being restarted. Retry the request.",
  },
  provider_unreachable: { status: 502, type: 'server_error', message: 'The model provider could not be reached.' },
  provider_error: { status: 502, type: 'server_error', message: 'The model provider answered with an error.' },
  provider_unavailable: {
    status: 503,
    type: 'server_error',
    message: 'Every endpoint of this provider is down; Hearth keeps checking them and sends requests again once one answers.',
  },
  provider_interrupted: {
    status: 502,
    type: 'server_error',
    message: 'The provider stopped answering after its reply had begun; the reply is incomplete and was not retried.',
  },
  internal_error: { status: 500, type: 'server_error', message: 'An internal error occurred. Details are in the server log.' },
  model_capability_missing: {
    status: 400,
    type: 'invalid_request_error',
    message: 'This model cannot do this operation. See its capabilities in GET /v1/images/models.',
  },
  model_incomplete: {
    status: 400,
    type: 'invalid_request_error',
    message: 'This model folder is incomplete. GET /v1/images/models says which part is missing.',
  },
  invalid_image: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The uploaded file is not an image Hearth can read (PNG, JPEG, WebP, GIF, TIFF, AVIF).',
  },
  job_not_found: { status: 404, type: 'invalid_request_error', message: 'No job has this id.' },
  media_provider_not_found: { status: 404, type: 'invalid_request_error', message: 'No media provider has this name. List them with GET /v1/media/providers.' },
  quote_not_found: { status: 404, type: 'invalid_request_error', message: 'No quote has this id, or it was already used.' },
  quote_expired: { status: 409, type: 'invalid_request_error', message: 'This quote has expired. Ask for a new one.' },
  hosted_media_disabled: { status: 403, type: 'permission_error', message: 'Paid hosted media is off. Set images.hosted.enabled in config.yaml to allow it.' },
  budget_exceeded: {
    status: 402,
    type: 'invalid_request_error',
    message: "This would exceed this month's hosted media budget (images.hosted.monthly_budget_usd).",
  },
  media_content_unavailable: { status: 404, type: 'invalid_request_error', message: 'This job has no content yet.' },
  job_cancelled: { status: 409, type: 'invalid_request_error', message: 'The job was cancelled before it finished.' },
  job_interrupted: { status: 500, type: 'server_error', message: 'The companion stopped while this job ran; it did not finish.' },
};

export interface HearthErrorOptions {
  param?: string | null;
  /** Seconds a client should wait before retrying (429/503). */
  retryAfter?: number;
  cause?: unknown;
  /** Extra fields for the error object, e.g. every problem of a document. */
  details?: Record<string, unknown>;
}

/** An error whose code is in the table; domain code throws these, routes render them. */
export class HearthError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly retryAfter: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, options: HearthErrorOptions = {}) {
    super(message ?? ERRORS[code].message, { cause: options.cause });
    this.name = 'HearthError';
    this.code = code;
    this.param = options.param ?? null;
    this.retryAfter = options.retryAfter;
    this.details = options.details;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  toBody(): ErrorBody {
    const body = errorBody(this.code, this.message, this.param);
    if (this.details) Object.assign(body.error, this.details);
    return body;
  }
}

/** An error in the OpenAI shape; a `hearth <command>` in its message is spelled the way it runs here (invocation.ts). */
export function errorBody(code: ErrorCode, message?: string, param: string | null = null): ErrorBody {
  return { error: { message: spellCommands(message ?? ERRORS[code].message), type: ERRORS[code].type, code, param } };
}
