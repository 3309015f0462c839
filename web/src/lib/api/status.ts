/** The companion's status stream (loopback-only): activity samples, load progress, download changes. */
import type { StatusEvent } from '#shared/api/admin.js';
import { ApiError, events, send } from './client';

/** Calls `onEvent` for every event until `signal` aborts; rejects when the stream cannot be opened or breaks. */
export async function followStatus(onEvent: (event: StatusEvent) => void, signal: AbortSignal): Promise<void> {
  const response = await send('/admin/events', { headers: { accept: 'text/event-stream' }, cache: 'no-store', signal });
  if (!response.body) throw new ApiError(response.status, 'invalid_response', 'The companion sent an empty status stream.');
  for await (const data of events(response.body, signal)) {
    try {
      onEvent(JSON.parse(data) as StatusEvent);
    } catch (error) {
      if (error instanceof SyntaxError) throw new ApiError(response.status, 'invalid_response', 'The status stream sent an event that is not JSON.');
      throw error;
    }
  }
  throw new ApiError(0, 'stream_interrupted', 'The status stream ended.');
}
