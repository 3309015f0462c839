import type { FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';

/**
 * A caller whose key is scoped to one agent may only reach that agent's memory. The perimeter
 * (http/perimeter.ts) sets `request.grant`; read structurally so memory works with or without it.
 */
export function scopedAgent(request: FastifyRequest): string | undefined {
  const grant = (request as { grant?: { agent?: string | null } | null }).grant;
  return grant?.agent ?? undefined;
}

export function assertAgentScope(request: FastifyRequest, agentId: string, param = 'agent_id'): void {
  const only = scopedAgent(request);
  if (only !== undefined && only !== agentId) {
    throw new HearthError('permission_denied', `This key may only reach the memory of agent "${only}", not "${agentId}".`, { param });
  }
}

/** `fact_12` or `12` -> 12. */
export function recordNumber(id: string): number {
  return Number(id.replace(/^[a-z]+_/, ''));
}

export function pageLimit(value: string | undefined, fallback = 50): number {
  return Math.min(500, Math.max(1, value === undefined ? fallback : Number(value)));
}
