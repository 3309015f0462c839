/** The companion's memory: agents, their transcript, episodes, facts and identity, edits, and recall. */
import type {
  MemoryAgentStatus,
  MemoryConsolidationReport,
  MemoryContextResponse,
  MemoryEpisode,
  MemoryFact,
  MemoryFactUpdate,
  MemoryFlushResponse,
  MemoryIdentityEntry,
  MemoryList,
  MemorySearchItem,
  MemorySearchScope,
  MemoryTranscriptTurn,
} from '#shared/api/memory.js';
import type { ApplyResult } from '#shared/api/admin-config.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { request } from './client';

const agentPath = (agent: string) => `/memory/agents/${encodeURIComponent(agent)}`;

export async function memoryAgents(): Promise<MemoryAgentStatus[]> {
  return (await request<{ agents: MemoryAgentStatus[] }>('/memory/agents', { cache: 'no-store' })).agents;
}

export function agentStatus(agent: string): Promise<MemoryAgentStatus> {
  return request<MemoryAgentStatus>(agentPath(agent), { cache: 'no-store' });
}

export function transcript(agent: string, before?: string): Promise<MemoryList<MemoryTranscriptTurn>> {
  return request(`${agentPath(agent)}/transcript${before ? `?before=${encodeURIComponent(before)}` : ''}`, { cache: 'no-store' });
}

export function episodes(agent: string, before?: string): Promise<MemoryList<MemoryEpisode>> {
  return request(`${agentPath(agent)}/episodes${before ? `?before=${encodeURIComponent(before)}` : ''}`, { cache: 'no-store' });
}

export function facts(agent: string, before?: string): Promise<MemoryList<MemoryFact>> {
  return request(`${agentPath(agent)}/facts${before ? `?before=${encodeURIComponent(before)}` : ''}`, { cache: 'no-store' });
}

export async function identity(agent: string): Promise<MemoryIdentityEntry[]> {
  return (await request<{ items: MemoryIdentityEntry[] }>(`${agentPath(agent)}/identity`, { cache: 'no-store' })).items;
}

export async function searchMemory(agent: string, query: string, scope: MemorySearchScope, limit = 50): Promise<MemorySearchItem[]> {
  const body = { agent_id: agent, query, scope, limit };
  return (await request<{ items: MemorySearchItem[] }>('/memory/search', { method: 'POST', body: JSON.stringify(body) })).items;
}

export function pinFact(agent: string, text: string): Promise<MemoryFact & { merged: boolean }> {
  return request(`${agentPath(agent)}/facts`, { method: 'POST', body: JSON.stringify({ text }) });
}

export function updateFact(agent: string, id: string, change: MemoryFactUpdate): Promise<MemoryFact> {
  return request(`${agentPath(agent)}/facts/${encodeURIComponent(id)}`, { method: 'PATCH', body: JSON.stringify(change) });
}

export function forgetFact(agent: string, id: string): Promise<{ id: string; deleted: true }> {
  return request(`${agentPath(agent)}/facts/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

export function setIdentity(agent: string, key: string, value: string): Promise<MemoryIdentityEntry> {
  return request(`${agentPath(agent)}/identity/${encodeURIComponent(key)}`, { method: 'PUT', body: JSON.stringify({ value }) });
}

export function forgetIdentity(agent: string, key: string): Promise<{ key: string; deleted: true }> {
  return request(`${agentPath(agent)}/identity/${encodeURIComponent(key)}`, { method: 'DELETE' });
}

export function flush(agent: string): Promise<MemoryFlushResponse> {
  return request('/memory/flush', { method: 'POST', body: JSON.stringify({ agent_id: agent }) });
}

export function consolidate(agent: string): Promise<MemoryConsolidationReport> {
  return request('/memory/consolidate', { method: 'POST', body: JSON.stringify({ agent_id: agent }) });
}

/** What would be recalled for `query`: the items and the tokens they use of the budget. */
export function recall(agent: string, query: string, budgetTokens?: number): Promise<MemoryContextResponse> {
  const body = budgetTokens ? { agent_id: agent, query, budget_tokens: budgetTokens } : { agent_id: agent, query };
  return request('/memory/context', { method: 'POST', body: JSON.stringify(body) });
}

/** The memory models in the configuration (the owner's admin routes: signed in only). */
export interface MemoryModels {
  /** Distils signals into episodes and facts; none: signals wait. */
  model: string | null;
  /** Makes recall find related words too; none: recall matches words only. */
  embeddingModel: string | null;
}

export async function memoryModels(): Promise<MemoryModels> {
  const document = await request<ConfigDocument>('/admin/config/export?format=json', { cache: 'no-store' });
  return { model: document.memory.model ?? null, embeddingModel: document.memory.embedding_model ?? null };
}

/** Sets a memory model through the configuration's plan/apply path (config.yaml stays the one source). */
export function setMemoryModel(kind: 'model' | 'embedding_model', id: string): Promise<ApplyResult> {
  const body = { document: { version: 1, memory: { [kind]: id } }, prune: false, confirm_high_risk: false };
  return request<ApplyResult>('/admin/config/apply', { method: 'POST', body: JSON.stringify(body) });
}
