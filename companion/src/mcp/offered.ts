import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCaller } from './bridge.js';
import { assignNames, type NameRequest } from '../tools/names.js';
import { serviceOffered } from '../tools/permitted.js';

/** How long one list, read or prompt request to a service may take. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Most pages read from one service's list. */
const MAX_PAGES = 50;

/** MCP's "resource not found" code, and the JSON-RPC invalid-params code for an unknown prompt. */
const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

/**
 * An error an /mcp request handler throws: the SDK sends its code and message as they are (an
 * McpError would repeat "MCP error <code>:" in front of the message the client prints again).
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A service's resource URI as /mcp offers it: `hearth://<service>/<the service's URI>`, so two
 * services' URIs never collide and a read finds its service again.
 */
export function offeredUri(service: string, uri: string): string {
  return `hearth://${service}/${uri}`;
}

function serviceUri(uri: string): { service: string; uri: string } | undefined {
  const match = /^hearth:\/\/([^/]+)\/(.+)$/s.exec(uri);
  return match ? { service: match[1]!, uri: match[2]! } : undefined;
}

/** The connected services that offer `capability` to this caller, with their clients. */
function offering(caller: ToolCaller, capability: 'resources' | 'prompts'): { service: string; client: Client }[] {
  return caller.config.mcp_services.flatMap(({ name }) => {
    const client = caller.manager.connectedClient(name);
    if (!client?.getServerCapabilities()?.[capability] || !serviceOffered(caller.config, caller.grant, name)) return [];
    return [{ service: name, client }];
  });
}

/** Every page of one service's list; a service that fails or is slow is left out rather than failing the whole list. */
async function allPages<T>(read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await read(cursor);
      items.push(...result.items);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
  } catch {
    // Partial lists are still offered.
  }
  return items;
}

const options = { timeout: REQUEST_TIMEOUT_MS };

/** One list from every offering service, each service's items renamed into Hearth's namespace. */
async function fromEach<T>(
  caller: ToolCaller,
  capability: 'resources' | 'prompts',
  read: (client: Client, cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
  rename: (service: string, item: T) => T,
): Promise<T[]> {
  const lists = await Promise.all(
    offering(caller, capability).map(async ({ service, client }) => (await allPages((cursor) => read(client, cursor))).map((item) => rename(service, item))),
  );
  return lists.flat();
}

const page = (cursor: string | undefined) => (cursor ? { cursor } : undefined);

export function listResources(caller: ToolCaller): Promise<Resource[]> {
  return fromEach(
    caller,
    'resources',
    async (client, cursor) => {
      const result = await client.listResources(page(cursor), options);
      return { items: result.resources, nextCursor: result.nextCursor };
    },
    (service, resource) => ({ ...resource, name: `${service}_${resource.name}`, uri: offeredUri(service, resource.uri) }),
  );
}

export function listResourceTemplates(caller: ToolCaller): Promise<ResourceTemplate[]> {
  return fromEach(
    caller,
    'resources',
    async (client, cursor) => {
      const result = await client.listResourceTemplates(page(cursor), options);
      return { items: result.resourceTemplates, nextCursor: result.nextCursor };
    },
    (service, template) => ({ ...template, name: `${service}_${template.name}`, uriTemplate: offeredUri(service, template.uriTemplate) }),
  );
}

export async function readResource(caller: ToolCaller, uri: string): Promise<ReadResourceResult> {
  const target = serviceUri(uri);
  const source = target && offering(caller, 'resources').find(({ service }) => service === target.service);
  if (!target || !source) throw new ProtocolError(RESOURCE_NOT_FOUND, `Resource ${uri} not found`);
  const result = await source.client.readResource({ uri: target.uri }, options);
  return { ...result, contents: result.contents.map((content) => ({ ...content, uri: offeredUri(target.service, content.uri) })) };
}

/** Prompts get exposed names the way tools do (`<service>_<prompt>`, made safe and unique). */
async function namedPrompts(caller: ToolCaller): Promise<{ name: string; service: string; client: Client; prompt: Prompt }[]> {
  const clients = new Map(offering(caller, 'prompts').map(({ service, client }) => [service, client]));
  const found = await fromEach(
    caller,
    'prompts',
    async (client, cursor) => {
      const result = await client.listPrompts(page(cursor), options);
      return { items: result.prompts.map((prompt) => ({ prompt, request: { service: '', tool: prompt.name } as NameRequest })), nextCursor: result.nextCursor };
    },
    (service, entry) => ({ prompt: entry.prompt, request: { service, tool: entry.prompt.name } }),
  );
  const names = assignNames(
    found.map((entry) => entry.request),
    new Set(),
  );
  return found.map(({ prompt, request }) => ({ name: names.get(request)!, service: request.service, client: clients.get(request.service)!, prompt }));
}

export async function listPrompts(caller: ToolCaller): Promise<Prompt[]> {
  return (await namedPrompts(caller)).map(({ name, prompt }) => ({ ...prompt, name }));
}

export async function getPrompt(caller: ToolCaller, name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
  const entry = (await namedPrompts(caller)).find((candidate) => candidate.name === name);
  if (!entry) throw new ProtocolError(INVALID_PARAMS, `Prompt ${name} not found`);
  const result = await entry.client.getPrompt({ name: entry.prompt.name, ...(args ? { arguments: args } : {}) }, options);
  return { ...result, messages: result.messages.map((message) => ({ ...message, content: withOfferedUri(entry.service, message.content) })) };
}

/** Resource links and embedded resources in a tool result, with URIs that /mcp can read back. */
export function offeredToolResult(service: string | null, result: CallToolResult): CallToolResult {
  if (service === null || !Array.isArray(result.content)) return result;
  return { ...result, content: result.content.map((content) => withOfferedUri(service, content)) };
}

function withOfferedUri<T>(service: string, content: T): T {
  const part = content as { type?: string; uri?: string; resource?: { uri?: string } };
  if (part.type === 'resource_link' && typeof part.uri === 'string') return { ...content, uri: offeredUri(service, part.uri) };
  if (part.type === 'resource' && typeof part.resource?.uri === 'string')
    return { ...content, resource: { ...part.resource, uri: offeredUri(service, part.resource.uri) } };
  return content;
}
