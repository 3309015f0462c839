import { listFilesTool, readFileTool, searchFilesTool } from './files-read.js';
import { editFileTool, writeFileTool } from './files-write.js';
import { shellTool } from './shell.js';
import { MEMORY_TOOLS } from './memory.js';
import { currentTimeTool } from './time.js';
import type { BuiltinTool } from './tool.js';

/**
 * Every tool Hearth itself provides, in catalog order. The tool catalog reserves their names and
 * never exposes them to external callers; agent runs call their `run`.
 */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [
  readFileTool,
  listFilesTool,
  searchFilesTool,
  writeFileTool,
  editFileTool,
  shellTool,
  currentTimeTool,
  ...MEMORY_TOOLS,
];

const byName = new Map(BUILTIN_TOOLS.map((tool) => [tool.name, tool]));

export function builtinTool(name: string): BuiltinTool | undefined {
  return byName.get(name);
}
