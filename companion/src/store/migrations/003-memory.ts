import type { Migration } from './migration.js';

/** Migration 3, released: never change it; add a new migration instead. */
export const migration: Migration = {
  version: 3,
  name: 'memory: transcript, signals, episodes, facts, identity, entities',
  sql: `
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

    CREATE VIRTUAL TABLE memory_turns_fts USING fts5(user_text, assistant_text, content='memory_turns', content_rowid='id', tokenize='porter unicode61');
    CREATE TRIGGER memory_turns_fts_insert AFTER INSERT ON memory_turns WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_turns_fts(rowid, user_text, assistant_text) VALUES (new.id, new.user_text, new.assistant_text);
    END;
    CREATE TRIGGER memory_turns_fts_delete AFTER DELETE ON memory_turns WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = old.agent_id) BEGIN
      INSERT INTO memory_turns_fts(memory_turns_fts, rowid, user_text, assistant_text) VALUES ('delete', old.id, old.user_text, old.assistant_text);
    END;
    CREATE TRIGGER memory_turns_fts_update AFTER UPDATE OF user_text, assistant_text ON memory_turns WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_turns_fts(memory_turns_fts, rowid, user_text, assistant_text) VALUES ('delete', old.id, old.user_text, old.assistant_text);
      INSERT INTO memory_turns_fts(rowid, user_text, assistant_text) VALUES (new.id, new.user_text, new.assistant_text);
    END;

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

    CREATE VIRTUAL TABLE memory_episodes_fts USING fts5(summary, topics, decisions, content='memory_episodes', content_rowid='id', tokenize='porter unicode61');
    CREATE TRIGGER memory_episodes_fts_insert AFTER INSERT ON memory_episodes WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_episodes_fts(rowid, summary, topics, decisions) VALUES (new.id, new.summary, new.topics, new.decisions);
    END;
    CREATE TRIGGER memory_episodes_fts_delete AFTER DELETE ON memory_episodes WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = old.agent_id) BEGIN
      INSERT INTO memory_episodes_fts(memory_episodes_fts, rowid, summary, topics, decisions) VALUES ('delete', old.id, old.summary, old.topics, old.decisions);
    END;
    CREATE TRIGGER memory_episodes_fts_update AFTER UPDATE OF summary, topics, decisions ON memory_episodes WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_episodes_fts(memory_episodes_fts, rowid, summary, topics, decisions) VALUES ('delete', old.id, old.summary, old.topics, old.decisions);
      INSERT INTO memory_episodes_fts(rowid, summary, topics, decisions) VALUES (new.id, new.summary, new.topics, new.decisions);
    END;

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

    CREATE VIRTUAL TABLE memory_facts_fts USING fts5(text, content='memory_facts', content_rowid='id', tokenize='porter unicode61');
    CREATE TRIGGER memory_facts_fts_insert AFTER INSERT ON memory_facts WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_facts_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER memory_facts_fts_delete AFTER DELETE ON memory_facts WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = old.agent_id) BEGIN
      INSERT INTO memory_facts_fts(memory_facts_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER memory_facts_fts_update AFTER UPDATE OF text ON memory_facts WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_facts_fts(memory_facts_fts, rowid, text) VALUES ('delete', old.id, old.text);
      INSERT INTO memory_facts_fts(rowid, text) VALUES (new.id, new.text);
    END;

  CREATE TABLE memory_identity (
    id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('extraction', 'user')),
    updated_at INTEGER NOT NULL,
    UNIQUE (agent_id, key)
  );

    CREATE VIRTUAL TABLE memory_identity_fts USING fts5(key, value, content='memory_identity', content_rowid='id', tokenize='porter unicode61');
    CREATE TRIGGER memory_identity_fts_insert AFTER INSERT ON memory_identity WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_identity_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
    END;
    CREATE TRIGGER memory_identity_fts_delete AFTER DELETE ON memory_identity WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = old.agent_id) BEGIN
      INSERT INTO memory_identity_fts(memory_identity_fts, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
    END;
    CREATE TRIGGER memory_identity_fts_update AFTER UPDATE OF key, value ON memory_identity WHEN NOT EXISTS (SELECT 1 FROM memory_index_removed WHERE agent_id = new.agent_id) BEGIN
      INSERT INTO memory_identity_fts(memory_identity_fts, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
      INSERT INTO memory_identity_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
    END;

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
`,
};
