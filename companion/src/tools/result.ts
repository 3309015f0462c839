/** One block of a tool result, as MCP has it: `text`, `image`, `resource_link`, `resource`, ... */
export type ToolContent = { type: string; [key: string]: unknown };

/** A text block: what Hearth's own tools and refusals answer. */
export type TextContent = { type: 'text'; text: string };

/**
 * The one result of a tool call, in MCP's shape: built-in tools, MCP services and refusals alike.
 * Failures are data (`isError`), not exceptions. Hearth's own tools answer text blocks only
 * (`ToolResult<TextContent>`); a service's result may hold any block.
 */
export type ToolResult<Content extends ToolContent = ToolContent> = {
  content: Content[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export function success(text: string, structured?: Record<string, unknown>): ToolResult<TextContent> & { isError: false } {
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}), isError: false };
}

/** A failure as a result: the text is what the caller (a model, an MCP client) reads. */
export function failure(message: string): ToolResult<TextContent> & { isError: true } {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** One block as text: text as it is, a resource by its text or its URI, any other block named by its type. */
function blockText(block: ToolContent): string {
  if (block.type === 'text' && typeof block.text === 'string') return block.text;
  if (block.type === 'resource_link') return `[resource ${String(block.uri)}]`;
  if (block.type === 'resource') {
    const resource = (block.resource ?? {}) as { text?: unknown; uri?: unknown };
    return typeof resource.text === 'string' ? resource.text : `[resource ${String(resource.uri)}]`;
  }
  return `[${block.type}${typeof block.mimeType === 'string' ? ` ${block.mimeType}` : ''}]`;
}

/** The blocks of a result as text, one per line. */
export function contentText(result: ToolResult): string {
  return result.content.map(blockText).join('\n');
}

/**
 * The text of a tool result as the model reads it: every block as text (contentText), an error
 * starting with "Error: ", cut to `limit` bytes with a note saying so.
 */
export function resultText(result: ToolResult, limit: number): string {
  const text = contentText(result);
  const full = result.isError ? `Error: ${text}` : text;
  const bytes = Buffer.from(full, 'utf8');
  if (bytes.length <= limit) return full;
  return `${bytes.subarray(0, limit).toString('utf8')}\n[output cut at ${Math.round(limit / 1024)} KB of ${bytes.length} bytes]`;
}
