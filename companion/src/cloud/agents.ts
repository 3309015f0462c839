import type { AgentCard } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import type { CloudTarget } from '../access/agent-target.js';
import { HearthError } from '../errors.js';
import type { CloudWorkspaceSettings } from '#shared/api/config.js';
import type { CloudAgentSummary } from '#shared/api/remote.js';
import type { CloudSignIn } from './sign-in.js';

/** A published agent of a workspace, read from its A2A agent card. */
export interface CloudAgent {
  /** `cloud:<workspace>/<agent>` */
  id: string;
  workspace: string;
  /** `<agent>`: the card's name made safe, unique in the workspace. */
  name: string;
  card: AgentCard;
  cardUrl: string;
}

const CARD_LIFETIME_MS = 60_000;

/**
 * The agents a workspace publishes: agent cards named in its settings or listed by its directory,
 * read with the A2A SDK's card resolver (v0.3 cards too). The workspace's token goes only to the
 * origins named in its settings: a card or directory entry elsewhere is fetched without it.
 */
export class CloudAgents {
  private readonly cache = new Map<string, { key: string; at: number; agents: Promise<CloudAgent[]> }>();

  constructor(private readonly signIn: CloudSignIn) {}

  async list(name: string): Promise<CloudAgent[]> {
    const settings = this.signIn.settings(name);
    // The sign-in is checked (and refreshed) on every listing, even when the cards are cached.
    await this.signIn.accessToken(name);
    const key = JSON.stringify(settings);
    const cached = this.cache.get(name);
    if (cached && cached.key === key && Date.now() - cached.at < CARD_LIFETIME_MS) return cached.agents;
    const agents = this.read(settings);
    this.cache.set(name, { key, at: Date.now(), agents });
    agents.catch(() => this.cache.delete(name));
    return agents;
  }

  /** The agent a `cloud:<workspace>/<agent>` id names (read by the dispatcher); 400 when the workspace publishes none by that name. */
  async find(target: Pick<CloudTarget, 'workspace' | 'agent'>): Promise<CloudAgent> {
    const agent = (await this.list(target.workspace)).find((entry) => entry.name === target.agent);
    if (!agent)
      throw new HearthError(
        'invalid_request_error',
        `The workspace "${target.workspace}" publishes no agent "${target.agent}". List agents with GET /agents.`,
        {
          param: 'id',
        },
      );
    return agent;
  }

  summaries(agents: CloudAgent[]): CloudAgentSummary[] {
    return agents.map((agent) => ({
      id: agent.id,
      name: agent.card.name,
      description: agent.card.description ?? '',
      streaming: agent.card.capabilities?.streaming === true,
      card_url: agent.cardUrl,
    }));
  }

  /** fetch for one workspace: its bearer token to its own origins, one refresh on a 401, then a clear refusal. */
  authorizedFetch(settings: CloudWorkspaceSettings): typeof fetch {
    const origins = trustedOrigins(settings);
    return async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input.toString());
      if (!origins.has(url.origin)) return fetch(input, init);
      const send = (token: string) => {
        const request = new Request(input, init);
        const headers = new Headers(request.headers);
        headers.set('authorization', `Bearer ${token}`);
        return fetch(new Request(request, { headers }));
      };
      const token = await this.signIn.accessToken(settings.name);
      const first = await send(token);
      if (first.status !== 401) return first;
      await first.body?.cancel();
      const second = await send(await this.signIn.rejected(settings.name, token));
      if (second.status !== 401) return second;
      await second.body?.cancel();
      throw new HearthError(
        'cloud_sign_in_required',
        `The workspace "${settings.name}" refused the sign-in (401) even after a refresh. Sign in again with: hearth cloud login ${settings.name}`,
      );
    };
  }

  private async read(settings: CloudWorkspaceSettings): Promise<CloudAgent[]> {
    const fetchImpl = this.authorizedFetch(settings);
    const entries: { url: string; card?: unknown }[] = settings.agent_cards.map((url) => ({ url }));
    if (settings.directory) entries.push(...(await readDirectory(settings.directory, fetchImpl)));
    const resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
    const cards = await Promise.all(
      entries.map(async (entry) => {
        try {
          const card = entry.card === undefined ? await resolver.resolve(entry.url, '') : resolver.normalizeAgentCard(entry.card);
          return { card: checkCard(card, entry.url), url: entry.url };
        } catch (error) {
          if (error instanceof HearthError) throw error;
          throw new HearthError('cloud_agent_error', `The agent card at ${entry.url} could not be read: ${(error as Error).message}`);
        }
      }),
    );
    const used = new Set<string>();
    return cards.map(({ card, url }) => {
      const base = slug(card.name) || 'agent';
      let name = base;
      for (let n = 2; used.has(name); n++) name = `${base}-${n}`;
      used.add(name);
      return { id: `cloud:${settings.name}/${name}`, workspace: settings.name, name, card, cardUrl: url };
    });
  }
}

/** The origins a workspace's token may be sent to: its directory's and its agent cards'. */
function trustedOrigins(settings: CloudWorkspaceSettings): Set<string> {
  return new Set([...settings.agent_cards, ...(settings.directory ? [settings.directory] : [])].map((url) => new URL(url).origin));
}

/** A directory answers a list of card URLs or cards, bare or as `{agents: [...]}`. */
async function readDirectory(url: string, fetchImpl: typeof fetch): Promise<{ url: string; card?: unknown }[]> {
  const response = await fetchImpl(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new HearthError('cloud_agent_error', `The agent directory ${url} answered ${response.status}.`);
  const body = (await response.json()) as unknown;
  const list = Array.isArray(body) ? body : Array.isArray((body as { agents?: unknown })?.agents) ? (body as { agents: unknown[] }).agents : undefined;
  if (!list) throw new HearthError('cloud_agent_error', `The agent directory ${url} did not answer a list of agent cards or card URLs.`);
  return list.map((entry, index) => (typeof entry === 'string' ? { url: new URL(entry, url).href } : { url: `${url}#${index}`, card: entry }));
}

function checkCard(card: AgentCard, url: string): AgentCard {
  if (typeof card?.name !== 'string' || !card.name.trim()) throw new HearthError('cloud_agent_error', `The agent card at ${url} has no name.`);
  if (!Array.isArray(card.supportedInterfaces) || card.supportedInterfaces.length === 0)
    throw new HearthError('cloud_agent_error', `The agent card at ${url} names no interface to reach the agent.`);
  return card;
}

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
}
