import {
  cancelRun,
  decideApproval,
  deleteAgent,
  followRun,
  getRun,
  listAgents,
  listApprovals,
  listCatalogTools,
  listRuns,
  RiskyChange,
  saveAgent,
  startRun,
} from '$lib/api/agents';
import { ApiError } from '$lib/api/client';
import { session } from './session.svelte';
import type { AgentApproval, AgentCatalogTool, AgentRecord, AgentRunEvent, AgentRunSummary } from '#shared/api/agents.js';
import type { ConfigRisk } from '#shared/api/admin-config.js';
import { applyEvent, FINISHED, viewOfRun, type RunView } from './agent-runs';
import { draftOf, settingsOf, type AgentDraft } from './agent-draft';
import { describe } from './problems';

export type { AgentDraft, RunView };

/** Why an owner-only request (tool catalog, approvals) was refused, in words; null when it was not refused. */
function ownerOnly(error: unknown, what: string): string | null {
  if (!(error instanceof ApiError)) return null;
  if (error.code === 'admin_credential_required') return `Sign in to see ${what}. ${session.howToSignIn}`;
  if (error.status === 403) return `Only the machine the companion runs on can see ${what}.`;
  return null;
}
/** How often the approvals inbox is asked while the app is open. */
const APPROVALS_EVERY_MS = 4000;

export class AgentsStore {
  agents = $state<AgentRecord[]>([]);
  error = $state<string | null>(null);
  /** The whole tool catalog (the owner's view), for the editor. */
  tools = $state<AgentCatalogTool[]>([]);
  toolsError = $state<string | null>(null);
  selectedId = $state<string | null>(null);
  selected = $derived(this.agents.find((agent) => agent.id === this.selectedId) ?? null);

  /** The definition being edited; `isNew` when it is not saved yet. */
  draft = $state<AgentDraft | null>(null);
  isNew = $state(false);
  saving = $state(false);
  saveError = $state<string | null>(null);
  /** A save the companion called high-risk: shown for confirmation, nothing applied yet. */
  risks = $state<ConfigRisk[] | null>(null);

  run = $state<RunView | null>(null);
  runError = $state<string | null>(null);
  /** The run on screen is being listened to. */
  following = $state(false);
  history = $state<AgentRunSummary[]>([]);
  historyError = $state<string | null>(null);

  approvals = $state<AgentApproval[]>([]);
  /** False when this browser may not see approvals (not on the companion's machine). */
  approvalsAvailable = $state(true);
  approvalsError = $state<string | null>(null);
  deciding = $state<Record<string, boolean>>({});
  pendingCount = $derived(this.approvals.length);

  #listening: AbortController | null = null;

  async refresh(): Promise<void> {
    try {
      this.agents = await listAgents();
      this.error = null;
      if (!this.selectedId || !this.agents.some((agent) => agent.id === this.selectedId)) this.selectedId = this.agents[0]?.id ?? null;
    } catch (error) {
      this.error = describe(error);
    }
  }

  async refreshTools(): Promise<void> {
    if (!this.signedIn) {
      this.toolsError = this.approvalsAvailable
        ? `Sign in to see the tool catalog. ${session.howToSignIn}`
        : 'Only the machine the companion runs on can see the tool catalog.';
      return;
    }
    try {
      this.tools = await listCatalogTools();
      this.toolsError = null;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) session.markSignedOut();
      this.toolsError = ownerOnly(error, 'the tool catalog') ?? describe(error);
    }
  }

  async select(id: string): Promise<void> {
    if (this.selectedId !== id) this.stopListening();
    this.selectedId = id;
    this.draft = null;
    if (this.run?.agentId !== id) this.run = null;
    await this.refreshHistory();
  }

  newAgent(): void {
    this.draft = draftOf();
    this.isNew = true;
    this.resetSave();
  }

  edit(): void {
    if (!this.selected) return;
    this.draft = draftOf(this.selected);
    this.isNew = false;
    this.resetSave();
  }

  closeEditor(): void {
    this.draft = null;
    this.resetSave();
  }

  /** Saves the draft through plan/apply; a high-risk change waits in `risks` until confirmed. */
  async save(confirm = false): Promise<boolean> {
    if (!this.draft) return false;
    this.saving = true;
    this.saveError = null;
    try {
      await saveAgent(settingsOf(this.draft), confirm);
      const id = this.draft.id;
      this.risks = null;
      this.draft = null;
      await this.refresh();
      this.selectedId = id;
      return true;
    } catch (error) {
      if (error instanceof RiskyChange) this.risks = error.risks;
      else this.saveError = describe(error);
      return false;
    } finally {
      this.saving = false;
    }
  }

  async remove(id: string): Promise<void> {
    try {
      await deleteAgent(id);
      if (this.selectedId === id) this.selectedId = null;
      this.draft = null;
      await this.refresh();
    } catch (error) {
      this.saveError = describe(error);
    }
  }

  /** Starts a run of the selected agent and streams it onto the screen. */
  async start(input: string, conversationId?: string): Promise<void> {
    const agent = this.selectedId;
    if (!agent || !input.trim()) return;
    this.stopListening();
    this.run = null;
    this.runError = null;
    await this.listen((signal) => startRun(agent, input, { conversationId, signal }));
    await this.refreshHistory();
  }

  /** Shows a past or running run; a running one is followed from where its record stands. */
  async open(runId: string): Promise<void> {
    this.stopListening();
    this.runError = null;
    try {
      const run = await getRun(runId);
      this.run = viewOfRun(run);
      if (!FINISHED.has(run.status)) await this.listen((signal) => followRun(runId, 0, signal));
    } catch (error) {
      this.runError = describe(error);
    }
  }

  async cancel(): Promise<void> {
    if (!this.run) return;
    try {
      await cancelRun(this.run.id);
    } catch (error) {
      this.runError = describe(error);
    }
  }

  async refreshHistory(): Promise<void> {
    if (!this.selectedId) return;
    try {
      this.history = await listRuns(this.selectedId);
      this.historyError = null;
    } catch (error) {
      this.historyError = describe(error);
    }
  }

  /** Owner-only routes are asked only once this browser is signed in, so a browser that is not never piles up refused requests. */
  get signedIn(): boolean {
    return session.signedIn;
  }

  async refreshApprovals(signal?: AbortSignal): Promise<void> {
    if (!this.signedIn) {
      this.approvals = [];
      this.approvalsError = this.approvalsAvailable
        ? `Sign in to see approvals. ${session.howToSignIn}`
        : 'Only the machine the companion runs on can see approvals.';
      return;
    }
    try {
      this.approvals = await listApprovals(signal);
      this.approvalsError = null;
    } catch (error) {
      if (signal?.aborted) return;
      const refused = ownerOnly(error, 'approvals');
      if (refused) {
        // Signed out meanwhile (or refused): no owner-only request until this browser signs in again.
        if (error instanceof ApiError && error.status === 401) session.markSignedOut();
        if (error instanceof ApiError && error.status === 403) this.approvalsAvailable = false;
        this.approvals = [];
        this.approvalsError = refused;
      } else this.approvalsError = describe(error);
    }
  }

  async decide(id: string, decision: 'approve' | 'deny', reason?: string): Promise<void> {
    this.deciding = { ...this.deciding, [id]: true };
    try {
      await decideApproval(id, decision, reason);
    } catch (error) {
      this.approvalsError = describe(error);
    } finally {
      const { [id]: _done, ...rest } = this.deciding;
      this.deciding = rest;
      await this.refreshApprovals();
    }
  }

  /** Keeps the approvals inbox (and its count) current while the app is open; returns the stop. */
  watch(): () => void {
    const controller = new AbortController();
    void this.refreshApprovals(controller.signal);
    const timer = setInterval(() => {
      if (this.approvalsAvailable) void this.refreshApprovals(controller.signal);
    }, APPROVALS_EVERY_MS);
    return () => {
      clearInterval(timer);
      controller.abort();
    };
  }

  stopListening(): void {
    this.#listening?.abort();
    this.#listening = null;
    this.following = false;
  }

  private async listen(open: (signal: AbortSignal) => AsyncGenerator<AgentRunEvent>): Promise<void> {
    const controller = new AbortController();
    this.#listening = controller;
    this.following = true;
    try {
      for await (const event of open(controller.signal)) {
        this.run = applyEvent(this.run, event);
        if (event.type === 'tool_call.approval_required') void this.refreshApprovals();
        if (event.type === 'tool_call.completed') void this.refreshApprovals();
      }
    } catch (error) {
      if (!controller.signal.aborted) this.runError = describe(error);
    } finally {
      if (this.#listening === controller) {
        this.#listening = null;
        this.following = false;
      }
    }
  }

  private resetSave(): void {
    this.saveError = null;
    this.risks = null;
  }
}

export const agents = new AgentsStore();
