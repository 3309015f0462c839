/**
 * Forks of a conversation: editing a question or asking again for a reply keeps what followed as
 * another version, and the user can go back to it. `messages` always holds the versions shown;
 * `alternates` the others, by the id of the message before the fork ('' at the start).
 */
import type { Conversation, StoredMessage } from '$lib/storage/conversations';

const keyAt = (conversation: Conversation, index: number) => conversation.messages[index - 1]?.id ?? '';

/** The versions that can follow message `index - 1`, oldest first: [tail as shown, ...others]. */
function versions(conversation: Conversation, index: number): StoredMessage[][] {
  const shown = conversation.messages.slice(index);
  const others = conversation.alternates?.[keyAt(conversation, index)] ?? [];
  return [shown, ...others].sort((a, b) => (a[0]?.createdAt ?? 0) - (b[0]?.createdAt ?? 0));
}

/**
 * Sets the messages from `index` on aside as another version (nothing is lost) and leaves the
 * conversation ending before them; the caller adds the new version.
 */
export function fork(conversation: Conversation, index: number): void {
  const tail = conversation.messages.slice(index);
  if (tail.length === 0) return;
  const key = keyAt(conversation, index);
  conversation.alternates ??= {};
  conversation.alternates[key] = [...(conversation.alternates[key] ?? []), tail];
  conversation.messages.splice(index);
}

/** Which version of what follows message `index - 1` is shown (1-based), and how many there are. */
export function versionAt(conversation: Conversation, index: number): { position: number; count: number } {
  const all = versions(conversation, index);
  const shown = conversation.messages[index];
  return { position: all.findIndex((tail) => tail[0]?.id === shown?.id) + 1, count: all.length };
}

/** Shows version `position` (1-based) of what follows message `index - 1`. */
export function showVersion(conversation: Conversation, index: number, position: number): void {
  const all = versions(conversation, index);
  const chosen = all[position - 1];
  if (!chosen || chosen[0]?.id === conversation.messages[index]?.id) return;
  const key = keyAt(conversation, index);
  conversation.alternates![key] = all.filter((tail) => tail[0]?.id !== chosen[0]?.id);
  conversation.messages.splice(index, conversation.messages.length - index, ...chosen);
}

/**
 * Deletes a turn: a question with the replies that answer it, or one reply. Versions that forked
 * after a deleted message go with it.
 */
export function removeTurn(conversation: Conversation, index: number): StoredMessage[] {
  const message = conversation.messages[index];
  if (!message) return [];
  let end = index + 1;
  if (message.role === 'user') while (conversation.messages[end]?.role === 'assistant') end++;
  const removed = conversation.messages.splice(index, end - index);
  for (const gone of removed) delete conversation.alternates?.[gone.id];
  return removed;
}
