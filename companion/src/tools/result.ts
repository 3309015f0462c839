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

/** An image block's bytes and type (MCP's `{type: "image", data: base64, mimeType}`); undefined for any other block. */
export function blockImage(block: ToolContent): { data: Buffer; mime: string } | undefined {
  if (block.type !== 'image' || typeof block.data !== 'string') return undefined;
  return { data: Buffer.from(block.data, 'base64'), mime: typeof block.mimeType === 'string' ? block.mimeType : 'image/*' };
}

/** What stands for an image in a result's text: its type and size (all a model without vision gets of it). */
export function imageNote(image: { data: Buffer; mime: string }): string {
  return `[image: ${image.mime}, ${image.data.length} bytes]`;
}

/** One block as text: text as it is, an image as its note, a resource by its text or its URI, any other block named by its type. */
function blockText(block: ToolContent): string {
  if (block.type === 'text' && typeof block.text === 'string') return block.text;
  const image = blockImage(block);
  if (image) return imageNote(image);
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
  return resultContent(result, limit).text;
}

/** An image of a result, and where its note ends in the result's text (UTF-16 offset). */
export interface ResultImage {
  data: Buffer;
  mime: string;
  offset: number;
  /** Its block's index in the result's content. */
  block: number;
}

/**
 * A tool result's text (resultText) and its images, each placed just after its note in the text: a
 * model that reads images gets each one there. An image whose note was cut off is left out.
 */
export function resultContent(result: ToolResult, limit: number): { text: string; images: ResultImage[] } {
  const prefix = result.isError ? 'Error: ' : '';
  const images: ResultImage[] = [];
  let at = prefix.length;
  const texts = result.content.map((block, index) => {
    const text = blockText(block);
    const image = blockImage(block);
    if (image) images.push({ ...image, offset: at + text.length, block: index });
    at += text.length + 1;
    return text;
  });
  const full = prefix + texts.join('\n');
  const bytes = Buffer.from(full, 'utf8');
  if (bytes.length <= limit) return { text: full, images };
  const kept = bytes.subarray(0, limit).toString('utf8');
  return {
    text: `${kept}\n[output cut at ${Math.round(limit / 1024)} KB of ${bytes.length} bytes]`,
    images: images.filter((image) => image.offset <= kept.length),
  };
}
