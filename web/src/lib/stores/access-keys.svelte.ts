/**
 * Access keys, managed in the app (Server screen): create one with its scopes, an optional agent
 * and an expiry (the key is shown once, then only its first characters), list them with their
 * last use, revoke one. Also makes the key of this browser in one step, for turning on "Require an
 * access key" without locking the app's own chat out.
 */
import { listAgents } from '$lib/api/agents';
import { createKey, listKeys, revokeKey } from '$lib/api/keys';
import { DEFAULT_KEY_SCOPES, type AccessKeyRecord, type CreatedKey, type RouteScope } from '#shared/api/access.js';
import { attempt } from './attempt';
import { adminProblem } from './problems';
import { server } from './server.svelte';

const describe = (error: unknown) => adminProblem(error, 'manage access keys');
const today = () => new Date(Date.now()).toLocaleDateString();

/** Whether a key still lets a program in: not revoked, not expired. */
export const isActive = (key: AccessKeyRecord, now = Date.now()): boolean => !key.revoked_at && (!key.expires_at || Date.parse(key.expires_at) > now);

/** How long a new key lasts: days, or 0 for no end. */
export const EXPIRY_CHOICES = [
  { days: 0, words: 'Never' },
  { days: 1, words: '1 day' },
  { days: 7, words: '7 days' },
  { days: 30, words: '30 days' },
  { days: 90, words: '90 days' },
  { days: 365, words: '1 year' },
] as const;

export interface KeyForm {
  label: string;
  scopes: RouteScope[];
  /** The only agent the key may act for; '' for any. */
  agent: string;
  expiryDays: number;
}

const emptyForm = (): KeyForm => ({ label: '', scopes: [...DEFAULT_KEY_SCOPES], agent: '', expiryDays: 0 });

export class AccessKeysStore {
  keys = $state<AccessKeyRecord[]>([]);
  loaded = $state(false);
  /** Agent ids a key can be limited to (empty when they could not be read: any agent then). */
  agents = $state<string[]>([]);
  form = $state<KeyForm>(emptyForm());
  /** The key just created, shown this once with Copy; gone when dismissed or the page reloads. */
  created = $state<CreatedKey | null>(null);
  creating = $state(false);
  /** Key ids with a revoke under way. */
  busy = $state<Record<string, boolean>>({});
  error = $state<string | null>(null);

  /** Newest first; the revoked and the expired after the active ones. */
  listed = $derived([...this.keys].sort((a, b) => Number(isActive(b)) - Number(isActive(a)) || b.created_at.localeCompare(a.created_at)));
  activeCount = $derived(this.keys.filter((key) => isActive(key)).length);

  async refresh(): Promise<void> {
    try {
      this.keys = await listKeys();
      this.loaded = true;
      this.error = null;
    } catch (error) {
      this.error = describe(error);
    }
    if (this.agents.length === 0)
      this.agents = await listAgents().then(
        (agents) => agents.map((agent) => agent.id),
        () => [],
      );
  }

  toggleScope(scope: RouteScope, on: boolean): void {
    const others = this.form.scopes.filter((entry) => entry !== scope);
    this.form.scopes = on ? [...others, scope] : others;
  }

  /** Why the form cannot be sent yet, or null. */
  problem = $derived(!this.form.label.trim() ? 'Give the key a name.' : this.form.scopes.length === 0 ? 'Choose at least one thing the key may use.' : null);

  async create(): Promise<CreatedKey | null> {
    if (this.problem) {
      this.error = this.problem;
      return null;
    }
    const { label, scopes, agent, expiryDays } = this.form;
    const created = await this.#create({ label: label.trim(), scopes, agent: agent || null, expires_in_days: expiryDays || null });
    if (created) this.form = emptyForm();
    return created;
  }

  /**
   * A key for this browser's own chat (every scope the app uses, no end), created and saved in this
   * browser in one step; true when both worked.
   */
  async createForThisBrowser(): Promise<boolean> {
    const created = await this.#create({ label: `This browser (${today()})`, scopes: [...DEFAULT_KEY_SCOPES] }, false);
    if (!created) return false;
    if (await server.saveKey(created.key)) return true;
    this.error = server.keyError ?? 'The new key could not be saved in this browser.';
    return false;
  }

  async #create(body: Parameters<typeof createKey>[0], show = true): Promise<CreatedKey | null> {
    this.creating = true;
    this.error = null;
    return attempt(
      async () => {
        const created = await createKey(body);
        if (show) this.created = created;
        await this.refresh();
        return created;
      },
      (error) => ((this.error = describe(error)), null),
      () => (this.creating = false),
    );
  }

  dismissCreated(): void {
    this.created = null;
  }

  async revoke(id: string): Promise<void> {
    this.busy = { ...this.busy, [id]: true };
    try {
      await revokeKey(id);
      if (this.created?.id === id) this.created = null;
      await this.refresh();
    } catch (error) {
      this.error = describe(error);
    } finally {
      const { [id]: _done, ...rest } = this.busy;
      this.busy = rest;
    }
  }
}

export const accessKeys = new AccessKeysStore();
