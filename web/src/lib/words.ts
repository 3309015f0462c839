/**
 * Counts in words, the one way every screen writes them: "1 message", "2 messages", "1,024 tokens".
 * `many` is for words whose plural is not the word and an s ("1 entry", "2 entries").
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? one : many}`;
}
