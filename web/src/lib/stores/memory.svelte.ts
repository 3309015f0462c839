/**
 * The Memory screen: which agents have memory and how much, one agent's transcript, episodes,
 * facts and identity (searchable), edits (pin, edit, forget), flush and consolidate, and a preview
 * of what would be recalled for a question within the token budget.
 */
import * as api from '$lib/api/memory';
import { ApiError } from '$lib/api/client';
import { session } from './session.svelte';
import type {
  MemoryAgentStatus,
  MemoryContextResponse,
  MemoryEpisode,
  MemoryFact,
  MemoryIdentityEntry,
  MemorySearchItem,
  MemoryTranscriptTurn,
} from '#shared/api/memory.js';
import { attempt } from './attempt';
import { describe } from './problems';
import { plural } from '$lib/words';

export type MemoryTab = 'facts' | 'identity' | 'episodes' | 'transcript';

/** "1 signal", "3 signals". */
/** Counts in words (the app's one helper, `$lib/words`), for the Memory screen too. */
export { plural };
const matches = (query: string, ...texts: string[]) => texts.some((text) => text.toLowerCase().includes(query));

export class MemoryStore {
  agents = $state<MemoryAgentStatus[]>([]);
  agentsLoaded = $state(false);
  agent = $state<string | null>(null);
  tab = $state<MemoryTab>('facts');
  query = $state('');
  facts = $state<MemoryFact[]>([]);
  identity = $state<MemoryIdentityEntry[]>([]);
  episodes = $state<MemoryEpisode[]>([]);
  turns = $state<MemoryTranscriptTurn[]>([]);
  /** Search results of the episodes or transcript tab (the companion's full-text search); null without a query. */
  found = $state<MemorySearchItem[] | null>(null);
  busy = $state(false);
  error = $state<string | null>(null);
  /** What the last flush or consolidation did, in words. */
  notice = $state<string | null>(null);
  recallQuery = $state('');
  recall = $state<MemoryContextResponse | null>(null);
  /** The configured memory models; null until read (signed in only). */
  models = $state<api.MemoryModels | null>(null);
  /** The last flush found no memory model to distil with. */
  needsModel = $state(false);
  /** A memory model being saved, and why saving failed. */
  savingModel = $state(false);
  modelError = $state<string | null>(null);

  status = $derived(this.agents.find((agent) => agent.agent_id === this.agent) ?? null);
  /** Facts and identity are filtered here; episodes and transcript are searched by the companion. */
  shownFacts = $derived(this.query.trim() ? this.facts.filter((fact) => matches(this.query.trim().toLowerCase(), fact.text)) : this.facts);
  shownIdentity = $derived(
    this.query.trim() ? this.identity.filter((entry) => matches(this.query.trim().toLowerCase(), entry.key, entry.value)) : this.identity,
  );

  async refreshAgents(): Promise<void> {
    await this.#try(async () => {
      this.agents = await api.memoryAgents();
      this.agentsLoaded = true;
      if (this.agent && !this.agents.some((agent) => agent.agent_id === this.agent)) this.agent = null;
      this.agent ??= this.agents[0]?.agent_id ?? null;
      if (this.agent) await this.load();
    });
  }

  async select(agent: string): Promise<void> {
    this.agent = agent;
    this.query = '';
    this.found = null;
    this.recall = null;
    this.notice = null;
    await this.#try(() => this.load());
  }

  async show(tab: MemoryTab): Promise<void> {
    this.tab = tab;
    this.found = null;
    await this.#try(() => this.load());
    if (this.query.trim()) await this.search();
  }

  /** Loads what the current tab shows, and the agent's counts. */
  async load(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    const status = api.agentStatus(agent).then((fresh) => {
      const index = this.agents.findIndex((candidate) => candidate.agent_id === agent);
      if (index >= 0) this.agents[index] = fresh;
    });
    const records = async () => {
      if (this.tab === 'facts') this.facts = (await api.facts(agent)).items;
      else if (this.tab === 'identity') this.identity = await api.identity(agent);
      else if (this.tab === 'episodes') this.episodes = (await api.episodes(agent)).items;
      else this.turns = (await api.transcript(agent)).items;
    };
    await Promise.all([status, records()]);
  }

  async search(): Promise<void> {
    const query = this.query.trim();
    if (!this.agent || !query || this.tab === 'facts' || this.tab === 'identity') {
      this.found = null;
      return;
    }
    const agent = this.agent;
    await this.#try(async () => {
      this.found = await api.searchMemory(agent, query, this.tab === 'episodes' ? 'episodes' : 'transcript');
    });
  }

  async pin(text: string): Promise<boolean> {
    if (!text.trim()) return false;
    return this.#change((agent) => api.pinFact(agent, text.trim()));
  }

  async editFact(fact: MemoryFact, text: string): Promise<boolean> {
    const agent = this.agent;
    if (!agent || !text.trim()) return false;
    return this.#try(async () => {
      this.#replace(await api.updateFact(agent, fact.id, { text: text.trim() }));
    });
  }

  async togglePin(fact: MemoryFact): Promise<boolean> {
    const status = fact.status === 'pinned' ? 'candidate' : 'pinned';
    return this.#change(async (agent) => this.#replace(await api.updateFact(agent, fact.id, { status })));
  }

  async forgetFact(fact: MemoryFact): Promise<boolean> {
    return this.#change((agent) => api.forgetFact(agent, fact.id));
  }

  async setIdentity(key: string, value: string): Promise<boolean> {
    if (!key.trim() || !value.trim()) return false;
    return this.#change((agent) => api.setIdentity(agent, key.trim(), value.trim()));
  }

  async forgetIdentity(key: string): Promise<boolean> {
    return this.#change((agent) => api.forgetIdentity(agent, key));
  }

  async flush(): Promise<void> {
    await this.#change(async (agent) => {
      const result = await api.flush(agent);
      this.needsModel = result.status === 'model_unavailable';
      this.notice =
        result.status === 'model_unavailable'
          ? `Nothing new was remembered: no memory model is available, so ${plural(result.pending, 'note')} from conversations ${result.pending === 1 ? 'waits' : 'wait'}.`
          : result.status === 'nothing_pending'
            ? 'Nothing was waiting to be remembered.'
            : `Read ${plural(result.signals_distilled, 'note')} from conversations: ${plural(result.episodes_added, 'episode')} and ${plural(result.facts_added, 'fact')} added, ${result.facts_merged} merged.`;
    });
  }

  async consolidate(): Promise<void> {
    await this.#change(async (agent) => {
      const report = await api.consolidate(agent);
      const pruned = report.episodes_pruned + report.facts_pruned + report.turns_pruned;
      this.notice = `Consolidated: ${plural(report.episodes_merged, 'episode')} merged, ${plural(report.facts_promoted, 'fact')} promoted, ${plural(pruned, 'record')} pruned.`;
    });
  }

  async preview(): Promise<void> {
    const agent = this.agent;
    const query = this.recallQuery.trim();
    if (!agent || !query) return;
    await this.#try(async () => {
      this.recall = await api.recall(agent, query);
    });
  }

  /** Reads which memory models are configured (only once signed in: it is the owner's configuration). */
  async refreshModels(): Promise<void> {
    if (!session.signedIn) {
      this.models = null;
      return;
    }
    try {
      this.models = await api.memoryModels();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) session.markSignedOut();
      this.models = null;
    }
  }

  /** Sets the memory model (distilling) or the embedding model (recall by meaning), through plan/apply. */
  async chooseModel(kind: 'model' | 'embedding_model', id: string): Promise<boolean> {
    this.savingModel = true;
    this.modelError = null;
    return attempt(
      async () => {
        const result = await api.setMemoryModel(kind, id);
        await this.refreshModels();
        if (kind === 'model') this.needsModel = false;
        const restart = result.restart_required.some((path) => path.startsWith('memory.'));
        this.notice = `${id} is now the ${kind === 'model' ? 'memory model: Remember now reads what waits' : 'embedding model: recall also finds related words'}.${restart ? ' Restart the companion for it to take effect.' : ''}`;
        return true;
      },
      (error) => ((this.modelError = describe(error)), false),
      () => (this.savingModel = false),
    );
  }

  #replace(fact: MemoryFact): void {
    const index = this.facts.findIndex((candidate) => candidate.id === fact.id);
    if (index >= 0) this.facts[index] = fact;
  }

  /** Changes the chosen agent's memory (nothing without one), then shows it again. */
  async #change(work: (agent: string) => Promise<unknown>): Promise<boolean> {
    const agent = this.agent;
    if (!agent) return false;
    return this.#try(async () => {
      await work(agent);
      await this.load();
    });
  }

  async #try(work: () => Promise<void>): Promise<boolean> {
    this.busy = true;
    this.error = null;
    return attempt(
      async () => (await work(), true),
      (error) => ((this.error = describe(error)), false),
      () => (this.busy = false),
    );
  }
}

export const memory = new MemoryStore();
