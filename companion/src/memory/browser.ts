import type {
  MemoryAgentStatus,
  MemoryEntity,
  MemoryEpisode,
  MemoryFact,
  MemoryFactUpdate,
  MemoryIdentityEntry,
  MemoryTranscriptTurn,
} from '#shared/api/memory.js';
import type { MemoryEditor } from './editor.js';
import type { MemoryManager } from './manage.js';
import type { TranscriptStore } from './transcript.js';
import { checkAgentId } from './validate.js';

/**
 * Browsing and editing one agent's memory records, for the memory routes and the app. Every
 * method checks the agent id first; records are listed even while the agent's search index is
 * removed (they are the material an index rebuild starts from).
 */
export class MemoryBrowser {
  constructor(
    private readonly manager: MemoryManager,
    private readonly transcript: TranscriptStore,
    private readonly editor: MemoryEditor,
  ) {}

  /** Every agent with memory, or only `only` (a key scoped to one agent). */
  agents(only?: string): MemoryAgentStatus[] {
    if (only !== undefined) checkAgentId(only);
    return this.manager.agents(only);
  }

  status(agentId: string): MemoryAgentStatus {
    return this.manager.status(checkAgentId(agentId));
  }

  turns(agentId: string, page: { conversationId?: string; before?: number; limit: number }): MemoryTranscriptTurn[] {
    return this.transcript.list(checkAgentId(agentId), page);
  }

  episodes(agentId: string, before: number | undefined, limit: number): MemoryEpisode[] {
    return this.manager.episodes(checkAgentId(agentId), before, limit);
  }

  facts(agentId: string, status: 'candidate' | 'pinned' | undefined, before: number | undefined, limit: number): MemoryFact[] {
    return this.manager.facts(checkAgentId(agentId), status, before, limit);
  }

  identity(agentId: string): MemoryIdentityEntry[] {
    return this.manager.identity(checkAgentId(agentId));
  }

  entities(agentId: string, limit: number): MemoryEntity[] {
    return this.manager.entities(checkAgentId(agentId), limit);
  }

  /** Pins a fact; an equal fact already kept is pinned instead of a duplicate (`merged`). */
  pin(agentId: string, text: string): MemoryFact & { merged: boolean } {
    checkAgentId(agentId);
    const pinned = this.editor.pin(agentId, text);
    return { ...this.manager.fact(agentId, pinned.id), merged: pinned.merged };
  }

  updateFact(agentId: string, id: number, change: MemoryFactUpdate): MemoryFact {
    checkAgentId(agentId);
    this.editor.updateFact(agentId, id, change);
    return this.manager.fact(agentId, id);
  }

  deleteFact(agentId: string, id: number): void {
    this.editor.deleteFact(checkAgentId(agentId), id);
  }

  setIdentity(agentId: string, key: string, value: string): MemoryIdentityEntry | undefined {
    checkAgentId(agentId);
    this.editor.setIdentity(agentId, key, value);
    return this.manager.identity(agentId).find((entry) => entry.key === key.trim());
  }

  deleteIdentity(agentId: string, key: string): void {
    this.editor.deleteIdentity(checkAgentId(agentId), key);
  }
}
