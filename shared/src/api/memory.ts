/** Wire types of the /memory routes (docs/memory.md). */

/** What an item is made of: a transcript block, a distilled episode, a pinned fact or an identity entry. */
export type MemoryMaterial = 'transcript' | 'episode' | 'pinned' | 'identity';
export type MemorySearchScope = 'pinned' | 'episodes' | 'transcript';
export type ExtractionOutcome = 'queued' | 'skipped' | 'model_unavailable';

export interface MemoryTurnInput {
  user: string;
  /** Empty or absent when the assistant has not answered. */
  assistant?: string;
}

/** POST /memory/ingest */
export interface MemoryIngestRequest {
  agent_id: string;
  conversation_id: string;
  turns: MemoryTurnInput[];
  /** ISO 8601 date or date-time; a date-time without a zone is UTC. */
  session_date?: string;
  skip_extraction?: boolean;
  project_id?: string;
}

export interface MemoryIngestResponse {
  status: 'ok';
  turns_ingested: number;
  /** queued: signals recorded for distillation; model_unavailable: recorded, and distilled once a memory model is available. */
  extraction: ExtractionOutcome;
}

/** POST /memory/delegated: work done for an agent, without touching its direct conversation. */
export interface MemoryDelegatedRequest {
  agent_id: string;
  conversation_id: string;
  task: string;
  result?: string;
  session_date?: string;
  project_id?: string;
}

/** POST /memory/flush */
export interface MemoryFlushRequest {
  agent_id: string;
  conversation_id?: string;
}

export interface MemoryFlushResponse {
  status: 'distilled' | 'nothing_pending' | 'model_unavailable';
  conversations: number;
  signals_distilled: number;
  /** Signals still pending afterwards (all of them when the model is unavailable). */
  pending: number;
  episodes_added: number;
  facts_added: number;
  facts_merged: number;
}

/** POST /memory/search */
export interface MemorySearchRequest {
  agent_id: string;
  query: string;
  scope: MemorySearchScope;
  limit?: number;
}

export interface MemorySearchItem {
  text: string;
  /** Higher is better; comparable within one answer only. */
  score: number;
  material: MemoryMaterial;
  source_id: string;
  /** ISO 8601 date of the session or record, when known. */
  date: string | null;
}

export interface MemorySearchResponse {
  items: MemorySearchItem[];
}

/** POST /memory/context */
export interface MemoryContextRequest {
  agent_id: string;
  query: string;
  /** Defaults to memory_budget_tokens; normalised into 100-4000. */
  budget_tokens?: number;
}

export interface MemoryContextItem {
  text: string;
  material: MemoryMaterial;
  /** The record behind the item; a transcript block names its first turn. */
  source_id: string;
  date: string | null;
}

export interface MemoryContextResponse {
  /** Exactly what would be injected, in order. */
  items: MemoryContextItem[];
  /** Tokens of the injected text: the sum over items of ceil(characters / 4). */
  tokens: number;
  budget_tokens: number;
}

/** POST /memory/consolidate */
export interface MemoryConsolidateRequest {
  agent_id?: string;
}

export interface MemoryConsolidationReport {
  agents: number;
  signals_distilled: number;
  episodes_decayed: number;
  facts_decayed: number;
  episodes_merged: number;
  facts_promoted: number;
  episodes_pruned: number;
  facts_pruned: number;
  turns_pruned: number;
}

export interface MemoryTranscriptTurn {
  id: string;
  conversation_id: string;
  kind: 'direct' | 'delegated';
  project_id: string | null;
  user: string;
  assistant: string;
  session_date: string | null;
  created_at: string;
  /** Whether the turn still awaits distillation. */
  pending: boolean;
}

export interface MemoryEpisode {
  id: string;
  conversation_id: string;
  project_id: string | null;
  summary: string;
  topics: string[];
  decisions: string[];
  session_date: string | null;
  salience: number;
  merged_count: number;
  created_at: string;
  updated_at: string;
}

export interface MemoryFact {
  id: string;
  text: string;
  status: 'candidate' | 'pinned';
  source: 'extraction' | 'user';
  support_count: number;
  salience: number;
  conversation_id: string | null;
  session_date: string | null;
  created_at: string;
  updated_at: string;
}

export interface MemoryIdentityEntry {
  key: string;
  value: string;
  source: 'extraction' | 'user';
  updated_at: string;
}

export interface MemoryEntity {
  name: string;
  kind: string;
  mentions: number;
  first_seen: string;
  last_seen: string;
}

export interface MemoryList<T> {
  items: T[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: string | null;
}

export interface MemoryAgentStatus {
  agent_id: string;
  turns: number;
  pending_signals: number;
  episodes: number;
  facts: { pinned: number; candidate: number };
  identity: number;
  index: 'ready' | 'removed';
}

export interface MemoryIndexResponse {
  agent_id: string;
  index: 'ready' | 'removed';
  /** Rows indexed (rebuild) or removed from the index (remove), per material. */
  rows: { transcript: number; episodes: number; facts: number; identity: number };
}

export interface MemoryPurgeResponse {
  agent_id: string;
  deleted: { turns: number; signals: number; episodes: number; facts: number; identity: number; entities: number };
}

/** POST /memory/agents/{agent}/facts: pins a fact (one already there is merged into). */
export interface MemoryFactPin {
  text: string;
}

/** PUT /memory/agents/{agent}/identity/{key} */
export interface MemoryIdentityValue {
  value: string;
}

/** PATCH /memory/agents/{agent}/facts/{id} */
export interface MemoryFactUpdate {
  text?: string;
  status?: 'candidate' | 'pinned';
}
