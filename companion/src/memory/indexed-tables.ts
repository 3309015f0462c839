/** The memory tables that have a full-text index, for index rebuild and removal. The tables themselves are made by store/migrations. */
export const INDEXED_TABLES: Record<string, string[]> = {
  memory_turns: ['user_text', 'assistant_text'],
  memory_episodes: ['summary', 'topics', 'decisions'],
  memory_facts: ['text'],
  memory_identity: ['key', 'value'],
};
