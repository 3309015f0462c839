/**
 * A streamed reply as Anthropic's events, in their order: message_start; per block
 * content_block_start, its deltas and content_block_stop (ping once, after the first start);
 * message_delta with the stop reason and the usage; message_stop. Thought and text arrive as the
 * model writes them, each run of one kind a block; tool calls come whole, after them.
 */
import type { HearthError } from '../../errors.js';
import type { GenerationResult } from '../../inference/types.js';
import type { ContentBlock, Message, MessageStreamEvent } from '#shared/api/anthropic.js';
import { anthropicError } from './errors.js';
import { stopOf, THINKING_SIGNATURE, toolUseOf, usageOf } from './message.js';

export class MessageEvents {
  private index = -1;
  /** The kind of the block that is open (started and not yet stopped). */
  private open: ContentBlock['type'] | null = null;
  private pinged = false;

  /** Sends message_start with the message as it is before anything is generated. */
  constructor(
    private readonly send: (event: MessageStreamEvent) => void,
    shell: Message,
  ) {
    send({ type: 'message_start', message: shell });
  }

  text(delta: string): void {
    if (!delta) return;
    this.switchTo('text', { type: 'text', text: '', citations: null });
    this.send({ type: 'content_block_delta', index: this.index, delta: { type: 'text_delta', text: delta } });
  }

  thinking(delta: string): void {
    if (!delta) return;
    this.switchTo('thinking', { type: 'thinking', thinking: '', signature: '' });
    this.send({ type: 'content_block_delta', index: this.index, delta: { type: 'thinking_delta', thinking: delta } });
  }

  /** The open block closed, each tool call a block of its own, then the stop reason and usage. */
  finish(result: GenerationResult): void {
    this.close();
    for (const call of result.toolCalls) {
      this.start({ ...toolUseOf(call), input: {} });
      if (call.arguments) this.send({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: call.arguments } });
      this.close();
    }
    this.ping();
    this.send({ type: 'message_delta', delta: stopOf(result), usage: usageOf(result) });
    this.send({ type: 'message_stop' });
  }

  /** A failure after the stream opened: Anthropic's `error` event (the stream then ends). */
  fail(error: HearthError): void {
    this.send(anthropicError(error));
  }

  private switchTo(kind: 'text' | 'thinking', block: ContentBlock): void {
    if (this.open === kind) return;
    this.close();
    this.start(block);
  }

  private start(block: ContentBlock): void {
    this.index++;
    this.open = block.type;
    this.send({ type: 'content_block_start', index: this.index, content_block: block });
    this.ping();
  }

  private ping(): void {
    if (this.pinged) return;
    this.pinged = true;
    this.send({ type: 'ping' });
  }

  private close(): void {
    if (this.open === null) return;
    if (this.open === 'thinking')
      this.send({ type: 'content_block_delta', index: this.index, delta: { type: 'signature_delta', signature: THINKING_SIGNATURE } });
    this.send({ type: 'content_block_stop', index: this.index });
    this.open = null;
  }
}
