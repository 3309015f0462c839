import type { ToolClass } from '#shared/api/config.js';
import type { ToolInputSchema } from '#shared/api/bridge.js';

/** A tool Hearth itself provides; its name is protected: no service tool can take it. */
export interface BuiltinTool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  class: ToolClass;
  /** Host-only tools (file writes, shell) are for Hearth's own agents: never shown to or callable by external clients. */
  hostOnly: boolean;
}

/**
 * Hearth's own host-side tools. The agents subsystem gives them their implementation; the
 * catalog reserves their names now so a service can never shadow them, and the bridge and /mcp
 * never expose them: external HTTP callers never get file writes or shell actions.
 */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [
  {
    name: 'write_file',
    description: 'Write a file on the machine Hearth runs on.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    class: 'write',
    hostOnly: true,
  },
  {
    name: 'edit_file',
    description: 'Edit a file on the machine Hearth runs on.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, old_text: { type: 'string' }, new_text: { type: 'string' } },
      required: ['path', 'old_text', 'new_text'],
    },
    class: 'write',
    hostOnly: true,
  },
  {
    name: 'shell',
    description: 'Run a shell command on the machine Hearth runs on.',
    inputSchema: { type: 'object', properties: { command: { type: 'string' }, cwd: { type: 'string' } }, required: ['command'] },
    class: 'exec',
    hostOnly: true,
  },
];
