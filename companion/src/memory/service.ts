import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/database.js';
import type { MemorySettings } from '#shared/api/config.js';
import type {
  ExtractionOutcome,
  MemoryConsolidationReport,
  MemoryContextResponse,
  MemoryFlushResponse,
  MemorySearchItem,
  MemorySearchScope,
} from '#shared/api/memory.js';
import { MemoryBrowser } from './browser.js';
import { consolidateAgent } from './consolidation.js';
import { ContextBuilder } from './context.js';
import { Distiller } from './distiller.js';
import { MemoryEditor } from './editor.js';
import { MemoryManager } from './manage.js';
import type { MemoryModels } from './models.js';
import { MemoryRecords } from './records.js';
import { DistillScheduler } from './scheduler.js';
import { ConsolidationTimer } from './consolidation-timer.js';
import { LexicalSearch } from './search.js';
import type { EmbeddingModels } from './embedder.js';
import { VectorIndex } from './vectors.js';
import { normaliseField } from './settings.js';
import { FtsNamespaces } from './fts-namespaces.js';
import { agentOfStaged, INGEST_CHUNK_TURNS, stagedId, yieldToEventLoop } from './staging.js';
import { TranscriptStore, type TurnBatch, type TurnRecord } from './transcript.js';
import { checkAgentId, parseSessionDate } from './validate.js';

export interface MemoryServiceOptions {
  db: Db;
  /** The saved settings, read at each use so an applied configuration governs at once. */
  settings: () => MemorySettings;
  models: MemoryModels;
  /** The embedding model for hybrid search; none keeps search lexical. */
  embeddings?: EmbeddingModels;
  log: Logger;
}

const NO_EMBEDDINGS: EmbeddingModels = { embedder: async () => undefined, close: async () => undefined };
/** Reciprocal-rank fusion constant: lexical and vector ranks count alike, the top few most. */
const FUSION_K = 60;

/** One buffered turn (docs/memory.md rule 1); project membership is captured here (rule 3). */
export interface BufferedTurn {
  agentId: string;
  conversationId: string;
  user: string;
  assistant?: string;
  sessionDate?: string;
  projectId?: string;
}

export interface IngestInput {
  agentId: string;
  conversationId: string;
  turns: { user: string; assistant?: string }[];
  sessionDate?: string;
  skipExtraction?: boolean;
  projectId?: string;
}

interface WriteInput {
  agentId: string;
  conversationId: string;
  turns: TurnRecord[];
  sessionDate?: string;
  projectId?: string;
  kind: 'direct' | 'delegated';
  signal: boolean;
}

/** The memory system: the one object routes, tools and agent runs call. Never imports Fastify. */
export class MemoryService {
  readonly transcript: TranscriptStore;
  readonly records: MemoryRecords;
  readonly manager: MemoryManager;
  readonly editor: MemoryEditor;
  readonly vectors: VectorIndex;
  /** Listing and editing records (the memory routes and the app go through this). */
  readonly browse: MemoryBrowser;
  private readonly lexical: LexicalSearch;
  /** Each agent's own full-text tables. */
  private readonly namespaces: FtsNamespaces;
  private readonly context: ContextBuilder;
  private readonly scheduler: DistillScheduler;
  private readonly timer: ConsolidationTimer;
  private lastActivity = 0;

  constructor(private readonly options: MemoryServiceOptions) {
    const { db, log } = options;
    this.namespaces = new FtsNamespaces(db);
    this.transcript = new TranscriptStore(db);
    this.records = new MemoryRecords(db, this.namespaces);
    this.manager = new MemoryManager(db, this.namespaces);
    this.vectors = new VectorIndex(db, options.embeddings ?? NO_EMBEDDINGS, log);
    this.editor = new MemoryEditor(db, this.records, (id) => {
      this.vectors.forgetRecord('pinned', id);
      this.vectors.schedule();
    });
    this.browse = new MemoryBrowser(this.manager, this.transcript, this.editor);
    this.lexical = new LexicalSearch(db, this.namespaces);
    this.context = new ContextBuilder(db, this.lexical);
    const distiller = new Distiller(this.transcript, this.records, options.models, (agentId) => this.manager.identity(agentId), log);
    this.scheduler = new DistillScheduler(
      distiller,
      () => this.settings().summary_debounce_seconds * 1000,
      log,
      () => this.vectors.schedule(),
    );
    this.timer = new ConsolidationTimer(db, {
      intervalMs: () => this.settings().consolidation_interval_hours * 3_600_000,
      idle: () => !this.scheduler.busy && Date.now() - this.lastActivity >= 60_000,
      run: () => this.consolidate(),
      log,
    });
  }

  settings(): MemorySettings {
    return this.options.settings();
  }

  /**
   * Schedules what survived a restart: pending conversations after the debounce, and
   * consolidation. First removes ingests a stopped process left unpublished, and makes the
   * full-text tables of agents that have none yet (after an upgrade).
   */
  start(): void {
    for (const staged of this.transcript.stagedIds()) this.discardStaged(staged);
    this.namespaces.ensureAll();
    for (const { agent_id, conversation_id } of this.transcript.pendingConversations()) this.scheduler.later(agent_id, conversation_id);
    this.timer.start();
    this.vectors.schedule();
  }

  async close(): Promise<void> {
    this.timer.stop();
    await this.scheduler.close();
    await this.vectors.close();
  }

  /** Rule 1: records a direct turn as a durable pending signal and restarts its debounce timer. */
  buffer(turn: BufferedTurn): void {
    this.write({ ...turn, kind: 'direct', turns: [{ user: turn.user, assistant: turn.assistant ?? '' }], signal: true });
  }

  /** Rule 4: work done for an agent, recorded without replacing or flushing its direct conversation. */
  recordDelegated(turn: BufferedTurn): void {
    this.write({ ...turn, kind: 'delegated', turns: [{ user: turn.user, assistant: turn.assistant ?? '' }], signal: true });
  }

  /**
   * POST /memory/ingest: all or nothing; once it returns, every turn is committed. A large
   * ingest is written in chunks that yield to the event loop (memory/staging.ts).
   */
  async ingest(input: IngestInput): Promise<{ turnsIngested: number; extraction: ExtractionOutcome }> {
    const turns = input.turns.map((turn) => ({ user: turn.user, assistant: turn.assistant ?? '' }));
    if (turns.length > INGEST_CHUNK_TURNS) await this.writeInChunks({ ...input, turns, kind: 'direct', signal: !input.skipExtraction });
    else this.write({ ...input, turns, kind: 'direct', signal: !input.skipExtraction });
    if (input.skipExtraction) return { turnsIngested: input.turns.length, extraction: 'skipped' };
    const runner = await this.options.models.extraction();
    return { turnsIngested: input.turns.length, extraction: runner ? 'queued' : 'model_unavailable' };
  }

  private write(input: WriteInput): void {
    this.transcript.append(this.batchOf(input));
    this.written(input);
  }

  /** A large ingest: chunks committed under a staged id, each followed by a yield, then published at once. */
  private async writeInChunks(input: WriteInput): Promise<void> {
    const batch = this.batchOf(input);
    const staged = stagedId(input.agentId);
    const fts = this.namespaces.table(input.agentId, 'memory_turns');
    try {
      for (let start = 0; start < batch.turns.length; start += INGEST_CHUNK_TURNS) {
        this.transcript.stage({ ...batch, agentId: staged, turns: batch.turns.slice(start, start + INGEST_CHUNK_TURNS) }, fts);
        await yieldToEventLoop();
      }
      // Were the agent's tables rebuilt or removed meanwhile, the staged turns are indexed again (or not at all).
      const now = this.namespaces.table(input.agentId, 'memory_turns');
      this.transcript.publish(staged, input.agentId, now !== fts ? now : undefined);
    } catch (error) {
      this.discardStaged(staged);
      throw error;
    }
    this.written(input);
  }

  /** Removes a staged ingest that was never published, with its entries in the agent's full-text table. */
  private discardStaged(staged: string): void {
    const agentId = agentOfStaged(staged);
    this.transcript.discardStaged(staged, this.namespaces.existing(agentId, 'memory_turns'));
  }

  private batchOf(input: WriteInput): TurnBatch {
    checkAgentId(input.agentId);
    const sessionTime = input.sessionDate === undefined ? null : parseSessionDate(input.sessionDate);
    this.lastActivity = Date.now();
    return {
      agentId: input.agentId,
      conversationId: input.conversationId,
      kind: input.kind,
      projectId: input.projectId ?? null,
      sessionDate: input.sessionDate ?? null,
      sessionTime,
      turns: input.turns,
      signal: input.signal,
    };
  }

  private written(input: WriteInput): void {
    if (input.signal) this.scheduler.buffered(input.agentId, input.conversationId, input.kind);
    this.vectors.schedule();
  }

  /** Distils now: one conversation, or every conversation of the agent with pending signals. */
  async flush(agentId: string, conversationId?: string): Promise<MemoryFlushResponse> {
    checkAgentId(agentId);
    const conversations = conversationId !== undefined ? [conversationId] : this.transcript.pendingConversations(agentId).map((row) => row.conversation_id);
    const result: MemoryFlushResponse = {
      status: 'nothing_pending',
      conversations: 0,
      signals_distilled: 0,
      pending: 0,
      episodes_added: 0,
      facts_added: 0,
      facts_merged: 0,
    };
    for (const conversation of conversations) {
      const outcome = await this.scheduler.now(agentId, conversation);
      if (!outcome || outcome.status === 'nothing_pending') continue;
      if (outcome.status === 'model_unavailable') result.status = 'model_unavailable';
      else if (result.status !== 'model_unavailable') result.status = 'distilled';
      result.conversations++;
      result.signals_distilled += outcome.signals;
      result.episodes_added += outcome.episodes;
      result.facts_added += outcome.factsAdded;
      result.facts_merged += outcome.factsMerged;
    }
    result.pending = this.transcript.pendingCount(agentId, conversationId);
    return result;
  }

  /** Lexical search, fused with nearest vectors (reciprocal rank) when an embedding model is configured. */
  async search(agentId: string, query: string, scope: MemorySearchScope, limit: number): Promise<MemorySearchItem[]> {
    this.usable(agentId);
    const lexical = this.lexical.search(agentId, query, scope, limit * 2);
    const near = await this.vectors.nearest(agentId, scope === 'episodes' ? 'episode' : scope, query, limit * 2).catch((error: unknown) => {
      this.options.log.warn({ err: error }, 'vector search failed; answering with lexical search');
      return undefined;
    });
    if (!near || near.length === 0) return lexical.slice(0, limit);
    const fused = new Map<string, { item: MemorySearchItem; score: number }>();
    lexical.forEach((item, rank) => fused.set(item.source_id, { item, score: 1 / (FUSION_K + rank + 1) }));
    const found = this.lexical.byIds(
      agentId,
      scope,
      near.map((hit) => hit.recordId),
    );
    near.forEach((hit, rank) => {
      const item = found.get(hit.recordId);
      if (!item) return;
      const entry = fused.get(item.source_id) ?? { item, score: 0 };
      entry.score += 1 / (FUSION_K + rank + 1);
      fused.set(item.source_id, entry);
    });
    return [...fused.values()]
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ item, score }) => ({ ...item, score: Number(score.toPrecision(6)) }));
  }

  /** Budgeted recall: exactly the items that would be injected, in order, within the budget. */
  recall(agentId: string, query: string, budgetTokens?: number): MemoryContextResponse {
    this.usable(agentId);
    const budget = normaliseField('memory_budget_tokens', budgetTokens ?? this.settings().memory_budget_tokens);
    return { ...this.context.build(agentId, query, budget), budget_tokens: budget };
  }

  /** On-demand consolidation of one agent or all; first distils what is pending (when a model is available). */
  async consolidate(agentId?: string): Promise<MemoryConsolidationReport> {
    if (agentId !== undefined) checkAgentId(agentId);
    const report: MemoryConsolidationReport = {
      agents: 0,
      signals_distilled: 0,
      episodes_decayed: 0,
      facts_decayed: 0,
      episodes_merged: 0,
      facts_promoted: 0,
      episodes_pruned: 0,
      facts_pruned: 0,
      turns_pruned: 0,
    };
    for (const pending of this.transcript.pendingConversations(agentId)) {
      const outcome = await this.scheduler.now(pending.agent_id, pending.conversation_id);
      report.signals_distilled += outcome?.signals ?? 0;
    }
    const agents = agentId !== undefined ? [agentId] : this.manager.agents().map((status) => status.agent_id);
    for (const agent of agents) {
      const steps = consolidateAgent(this.options.db, agent, this.settings());
      report.agents++;
      for (const [name, value] of Object.entries(steps)) report[name as keyof typeof steps] += value;
    }
    this.timer.ran();
    return report;
  }

  purge(agentId: string) {
    checkAgentId(agentId);
    this.scheduler.forget(agentId);
    this.vectors.forgetAgent(agentId);
    return this.manager.purge(agentId);
  }

  /** Removes the agent's lexical index and its vectors; the records stay. */
  removeIndex(agentId: string) {
    checkAgentId(agentId);
    this.vectors.forgetAgent(agentId);
    return this.manager.removeIndex(agentId);
  }

  /** Rebuilds the agent's index from its own records; vectors are made again in the background. */
  rebuildIndex(agentId: string) {
    checkAgentId(agentId);
    this.vectors.forgetAgent(agentId);
    const result = this.manager.rebuildIndex(agentId);
    this.vectors.schedule();
    return result;
  }

  private usable(agentId: string): void {
    checkAgentId(agentId);
    if (this.manager.indexRemoved(agentId)) {
      throw new HearthError(
        'memory_index_removed',
        `The memory index of agent "${agentId}" was removed. Rebuild it with POST /memory/agents/${agentId}/index/rebuild.`,
        { param: 'agent_id' },
      );
    }
  }
}
