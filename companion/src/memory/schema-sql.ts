/* Frozen as migration 3: change the memory schema only by adding a new migration. */
/**
 * Tables of the memory system (SPEC.md §2.9), used by migration 3 in store/migrations.ts.
 * Every searchable table has an external-content FTS5 index kept in step by triggers, except
 * for agents whose index was removed (a row in memory_index_removed): rule 6 of SPEC.md §3.
 */
const indexed = (table: string, columns: string[]) => {
  const list = columns.join(', ');
  const fresh = columns.map((column) => `new.${column}`).join(', ');
  const stale = columns.map((column) => `old.${column}`).join(', ');
  const live = (row: 'new' | 'old') => `NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = ${row}.agent_id)`;
  return `
    CREATE VIRTUAL TABLE ${table}_fts USING fts5(${list}, content='${table}', content_rowid='id', tokenize='porter unicode61');
    CREATE TRIGGER ${table}_fts_insert AFTER INSERT ON ${table} WHEN ${live('new')} BEGIN
      INSERT INTO ${table}_fts(rowid, ${list}) VALUES (new.id, ${fresh});
    END;
    CREATE TRIGGER ${table}_fts_delete AFTER DELETE ON ${table} WHEN ${live('old')} BEGIN
      INSERT INTO ${table}_fts(${table}_fts, rowid, ${list}) VALUES ('delete', old.id, ${stale});
    END;
    CREATE TRIGGER ${table}_fts_update AFTER UPDATE OF ${list} ON ${table} WHEN ${live('new')} BEGIN
      INSERT INTO ${table}_fts(${table}_fts, rowid, ${list}) VALUES ('delete', old.id, ${stale});
      INSERT INTO ${table}_fts(rowid, ${list}) VALUES (new.id, ${fresh});
    END;
  `;
};

export const MEMORY_SCHEMA_SQL = `
  CREATE TABLE memory_index_removed (
    agent_id TEXT PRIMARY KEY,
    removed_at INTEGER NOT NULL
  );
  -- Transcript: one row per turn (a user message and the assistant's answer).
  CREATE TABLE memory_turns (
    id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('direct', 'delegated')),
    project_id TEXT,
    user_text TEXT NOT NULL,
    assistant_text TEXT NOT NULL,
    -- as given (ISO 8601 date or date-time) and as epoch milliseconds for ordering
    session_date TEXT,
    session_time INTEGER,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX memory_turns_conversation ON memory_turns(agent_id, conversation_id, id);
  CREATE INDEX memory_turns_created ON memory_turns(agent_id, created_at);
  ${indexed('memory_turns', ['user_text', 'assistant_text'])}
  -- Pending signals: turns awaiting the extraction pass; deleted once distilled.
  CREATE TABLE memory_signals (
    id INTEGER PRIMARY KEY,
    turn_id INTEGER NOT NULL UNIQUE REFERENCES memory_turns(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
  );
  CREATE INDEX memory_signals_conversation ON memory_signals(agent_id, conversation_id, id);
  CREATE TABLE memory_episodes (
    id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    project_id TEXT,
    summary TEXT NOT NULL,
    topics TEXT NOT NULL,
    decisions TEXT NOT NULL,
    session_date TEXT,
    session_time INTEGER,
    salience REAL NOT NULL,
    merged_count INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    decayed_at INTEGER NOT NULL
  );
  CREATE INDEX memory_episodes_agent ON memory_episodes(agent_id, id);
  ${indexed('memory_episodes', ['summary', 'topics', 'decisions'])}
  CREATE TABLE memory_facts (
    id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    text TEXT NOT NULL,
    -- candidate: proposed by extraction; pinned: promoted by repeated support, or pinned by a person or tool
    status TEXT NOT NULL CHECK (status IN ('candidate', 'pinned')),
    source TEXT NOT NULL CHECK (source IN ('extraction', 'user')),
    support_count INTEGER NOT NULL DEFAULT 1,
    salience REAL NOT NULL,
    conversation_id TEXT,
    session_date TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    decayed_at INTEGER NOT NULL
  );
  CREATE INDEX memory_facts_agent ON memory_facts(agent_id, status, id);
  ${indexed('memory_facts', ['text'])}
  CREATE TABLE memory_identity (
    id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('extraction', 'user')),
    updated_at INTEGER NOT NULL,
    UNIQUE (agent_id, key)
  );
  ${indexed('memory_identity', ['key', 'value'])}
  CREATE TABLE memory_entities (
    agent_id TEXT NOT NULL,
    name TEXT NOT NULL COLLATE NOCASE,
    kind TEXT NOT NULL,
    mentions INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (agent_id, name)
  );
  CREATE TABLE memory_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
`;

/** The searchable tables and their indexed columns, for index rebuild and removal. */
export const INDEXED_TABLES: Record<string, string[]> = {
  memory_turns: ['user_text', 'assistant_text'],
  memory_episodes: ['summary', 'topics', 'decisions'],
  memory_facts: ['text'],
  memory_identity: ['key', 'value'],
};
