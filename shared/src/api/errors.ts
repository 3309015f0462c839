/** The OpenAI error shape every Hearth route answers errors with. */
export interface ErrorBody {
  error: {
    message: string;
    type: ErrorType;
    code: ErrorCode;
    param: string | null;
  };
}

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'server_error';

export const ERROR_CODES = [
  'invalid_request_error',
  'invalid_json',
  'context_length_exceeded',
  'request_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'model_not_found',
  'response_not_found',
  'key_not_found',
  'host_not_allowed',
  'origin_not_allowed',
  'config_invalid',
  'confirmation_required',
  'memory_record_not_found',
  'memory_index_removed',
  'tool_not_found',
  'mcp_service_not_found',
  'agent_not_found',
  'run_not_found',
  'artifact_not_found',
  'approval_not_found',
  'approval_decided',
  'conversation_busy',
  'download_not_found',
  'download_conflict',
  'model_read_only',
  'route_not_found',
  'range_not_satisfiable',
  'method_not_allowed',
  'model_load_failed',
  'model_not_chat',
  'model_not_embedding',
  'invalid_api_key',
  'admin_credential_required',
  'permission_denied',
  'upgrade_required',
  'pairing_failed',
  'fingerprint_mismatch',
  'device_not_paired',
  'device_not_found',
  'remote_disabled',
  'remote_host_not_found',
  'remote_host_unreachable',
  'remote_host_not_paired',
  'remote_host_refused',
  'remote_certificate_changed',
  'cloud_workspace_not_found',
  'cloud_sign_in_required',
  'cloud_workspace_mismatch',
  'cloud_agent_error',
  'rate_limit_exceeded',
  'server_busy',
  'engine_crashed',
  'provider_unreachable',
  'provider_error',
  'internal_error',
  'model_capability_missing',
  'model_incomplete',
  'invalid_image',
  'job_not_found',
  'media_provider_not_found',
  'quote_not_found',
  'quote_expired',
  'hosted_media_disabled',
  'budget_exceeded',
  'media_content_unavailable',
  'job_interrupted',
  'job_cancelled',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
