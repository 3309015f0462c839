import type { AgentRunError } from '#shared/api/agents.js';
import { ERROR_CODES, type ErrorCode } from '#shared/api/errors.js';
import type { MediaJob } from '#shared/api/media.js';
import { RUN_FAILURE_CODES, type MediaJobFailureCode, type RunFailureCode, type RunOnlyFailureCode } from '#shared/api/failures.js';
import { ERRORS } from './errors.js';

/**
 * The failure table: code -> what a failed run's or media job's record says when the code's
 * thrower gives no message. Runs also fail with HTTP error codes (their model call's), whose
 * words are in the HTTP table (errors.ts); image jobs fail with HTTP error objects only.
 */
export const RUN_FAILURES: Record<RunOnlyFailureCode, string> = {
  max_steps_exceeded: 'The agent still asked for tools after its last allowed model call (max_steps); they were not run.',
  interrupted: 'Hearth stopped during this run, so it was not finished. Start it again to retry.',
  remote_connection_lost: 'The connection to the host closed before the run ended and could not be picked up again.',
  remote_error: 'The run failed on the host.',
  cloud_task_failed: 'The cloud agent reported that the task failed.',
  cloud_task_rejected: 'The cloud agent rejected the task.',
  cloud_task_input_required: 'The cloud agent asks for more input, which a Hearth run cannot give; start a new run with everything it needs.',
  cloud_task_auth_required: 'The cloud agent asks for an authorization of its own, which a Hearth run cannot give.',
  cloud_task_submitted: 'The cloud agent ended the task in a state Hearth does not know.',
  cloud_task_working: 'The cloud agent ended the task in a state Hearth does not know.',
  cloud_task_unknown: 'The cloud agent ended the task in a state Hearth does not know.',
};

export const MEDIA_JOB_FAILURES: Record<MediaJobFailureCode, string> = {
  input_missing: 'The first frame of this quote is no longer stored, so nothing was sent. Ask for a new quote.',
  provider_refused: 'The provider refused the job, so it was not made or charged.',
  not_submitted: 'The provider has no record of this job, so it was not made or charged. It was not sent again; confirm a new quote to try again.',
  provider_failed: 'The provider reports that the video failed.',
  expired: "The provider's copy expired before it could be downloaded.",
};

const RUN_CODES = new Set<string>([...ERROR_CODES, ...RUN_FAILURE_CODES]);

/** Whether a code read from elsewhere (a paired host's run) is in the run failure table. */
export function isRunFailureCode(code: string): code is RunFailureCode {
  return RUN_CODES.has(code);
}

/** A run's failure: the code and its words from the table unless the thrower has better ones. */
export function runFailure(code: RunFailureCode, message?: string): AgentRunError {
  return { code, message: message ?? (isErrorCode(code) ? ERRORS[code].message : RUN_FAILURES[code]) };
}

/** A media job's failure: the code and its words from the table unless the thrower has better ones. */
export function mediaFailure(code: MediaJobFailureCode, message?: string): NonNullable<MediaJob['error']> {
  return { code, message: message ?? MEDIA_JOB_FAILURES[code] };
}

function isErrorCode(code: RunFailureCode): code is ErrorCode {
  return code in ERRORS;
}
