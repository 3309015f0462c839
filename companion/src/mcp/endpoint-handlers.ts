import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { argumentsProblem } from './arguments.js';
import { argumentProblems, listMcpTools, permittedTool, type ToolCaller } from './bridge.js';
import { failure } from '../tools/result.js';
import { sdk } from './sdk.js';
import { getPrompt, listPrompts, listResources, listResourceTemplates, offeredToolResult, ProtocolError, readResource } from './offered.js';

/** What the /mcp server declares: tools, resources and prompts that change, and log messages. */
export const ENDPOINT_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
  logging: {},
};

/** JSON-RPC's invalid-params code, which MCP uses for an unknown tool. */
const INVALID_PARAMS = -32602;

/**
 * The requests an /mcp session answers, each for the caller it belongs to: tools (with the
 * service's progress notifications handed on to a caller that asked for them with a progress
 * token), and the services' resources and prompts.
 */
export function registerHandlers(server: Server, caller: () => ToolCaller): void {
  const {
    CallToolRequestSchema,
    GetPromptRequestSchema,
    ListPromptsRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ListToolsRequestSchema,
    ReadResourceRequestSchema,
  } = sdk();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listMcpTools(caller()) }));
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const name = call.params.name;
    const args = (call.params.arguments ?? {}) as Record<string, unknown>;
    const who = caller();
    let entry;
    try {
      entry = permittedTool(who, name);
    } catch {
      // Absent and forbidden look the same.
      throw new ProtocolError(INVALID_PARAMS, `Tool ${name} not found`);
    }
    const bound = argumentsProblem(args);
    if (bound) return failure(`Invalid arguments for ${name}: ${bound}`);
    const problems = argumentProblems(entry, args);
    if (problems.length > 0) return failure(`Invalid arguments for ${name}: ${problems.map((problem) => `${problem.path} ${problem.message}`).join('; ')}`);
    const token = call.params._meta?.progressToken;
    // Progress goes out in order, and all of it before the result (after which the client stops listening).
    let sent: Promise<void> = Promise.resolve();
    const onprogress =
      token === undefined
        ? undefined
        : (progress: Progress) => {
            sent = sent
              .then(() => extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } }))
              .catch(() => undefined);
          };
    const result = await who.manager.call(entry, args, extra.signal, onprogress);
    await sent;
    return offeredToolResult(entry.service, result);
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listResources(caller()) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: await listResourceTemplates(caller()) }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(caller(), request.params.uri));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: await listPrompts(caller()) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => getPrompt(caller(), request.params.name, request.params.arguments));
}
