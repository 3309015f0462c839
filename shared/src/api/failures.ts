import type { ErrorCode } from './errors.js';

/*
 * Why a run or a job failed, as its record and its events say (`error: {code, message}`). Like
 * the HTTP error codes, these are closed lists: docs/errors.md explains every code, and what the
 * user or the client should do about it.
 */

/** Failures only a run has. A run can also fail with an HTTP error code (ErrorCode): its model call's, or a host's refusal. */
export const RUN_FAILURE_CODES = [
  'max_steps_exceeded',
  'interrupted',
  'remote_connection_lost',
  'remote_error',
  'cloud_task_failed',
  'cloud_task_rejected',
  'cloud_task_input_required',
  'cloud_task_auth_required',
  'cloud_task_submitted',
  'cloud_task_working',
  'cloud_task_unknown',
] as const;

export type RunOnlyFailureCode = (typeof RUN_FAILURE_CODES)[number];

/** The code of a failed agent run (`error.code` of the run and of its run.failed event). */
export type RunFailureCode = ErrorCode | RunOnlyFailureCode;

/** The code of a failed hosted media job (`error.code` of GET /v1/media/jobs/{id}). */
export const MEDIA_JOB_FAILURE_CODES = ['input_missing', 'provider_refused', 'not_submitted', 'provider_failed', 'expired'] as const;

export type MediaJobFailureCode = (typeof MEDIA_JOB_FAILURE_CODES)[number];

/** An image job fails with an HTTP error object: its code is one of the HTTP error codes. */
export type ImageJobFailureCode = ErrorCode;
