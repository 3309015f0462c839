import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface StoredEvent {
  id: EventId;
  streamId: StreamId;
  message: JSONRPCMessage;
  /** Characters of its JSON, counted against the session's limit. */
  size: number;
}

/**
 * The events of one /mcp session's SSE streams, kept so that a client whose stream broke can
 * reconnect with `Last-Event-ID` and receive what it missed (Streamable HTTP resumability).
 * Bounded: the newest `limit` events of the session, and no more than `maxChars` characters of
 * JSON (tool results can be large), are kept; a client asking to resume from an event older than
 * that is told the id is unknown (and starts afresh). Ids are unique within the session, which is
 * the only place they are looked up.
 *
 * There is deliberately no `getStreamIdForEventId`: with it, the SDK refuses a resume with 409
 * "Stream already has an active connection" while it still holds the broken stream (a dropped
 * network leaves this side's socket open), and the client gives up. Without it, the resume takes
 * the stream over and the old one is closed. Unknown ids are refused before the SDK sees them
 * (`knows`), so they stay a 400.
 */
export class SessionEventStore implements EventStore {
  private readonly events: StoredEvent[] = [];
  private readonly streams = new Map<EventId, StreamId>();
  private next = 0;
  private chars = 0;

  constructor(
    private readonly limit = 1000,
    private readonly maxChars = 8 * 1024 * 1024,
  ) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.next);
    const size = JSON.stringify(message).length;
    this.events.push({ id, streamId, message, size });
    this.streams.set(id, streamId);
    this.chars += size;
    while (this.events.length > this.limit || (this.chars > this.maxChars && this.events.length > 1)) {
      const dropped = this.events.shift()!;
      this.streams.delete(dropped.id);
      this.chars -= dropped.size;
    }
    return id;
  }

  /** Whether a resume from this id can be served (the id was given out here and is still kept). */
  knows(eventId: EventId): boolean {
    return this.streams.has(eventId);
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const streamId = this.streams.get(lastEventId);
    if (streamId === undefined) throw new Error(`Unknown event id ${lastEventId}`);
    const after = Number(lastEventId);
    for (const event of this.events) {
      // Priming events carry no message: there is nothing to send again.
      if (event.streamId !== streamId || Number(event.id) <= after || !('jsonrpc' in event.message)) continue;
      await send(event.id, event.message);
    }
    return streamId;
  }
}
