import type { FastifyRequest } from 'fastify';
import { EVERY_JOB, type JobViewer } from '../../images/jobs/job-store.js';

/**
 * Whose image and media jobs a request sees: an access key sees the jobs it made; a request
 * without one (the app and every local client while `server.auth.required` is false, the admin
 * credential among them) sees all of them.
 */
export function viewerOf(request: FastifyRequest): JobViewer {
  return request.grant ? { key: request.grant.id } : EVERY_JOB;
}

/** The key recorded on a new job: null when the request carries none. */
export function ownerOf(request: FastifyRequest): string | null {
  return request.grant?.id ?? null;
}
