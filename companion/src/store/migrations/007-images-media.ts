import type { Migration } from './migration.js';

/** Migration 7: image jobs (the gallery) and hosted media quotes and jobs. */
export const migration: Migration = {
  version: 7,
  name: 'image jobs and hosted media',
  sql: `
      CREATE TABLE image_jobs (
        id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL,
        step INTEGER NOT NULL DEFAULT 0,
        steps INTEGER NOT NULL DEFAULT 0,
        prompt TEXT,
        negative_prompt TEXT,
        size TEXT,
        seed INTEGER,
        notes_json TEXT NOT NULL DEFAULT '[]',
        results_json TEXT NOT NULL DEFAULT '[]',
        error_json TEXT,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        -- milliseconds since the epoch
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER
      );
      CREATE INDEX image_jobs_created ON image_jobs (created_at DESC);
      CREATE TABLE media_quotes (
        id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        operation TEXT NOT NULL,
        prompt TEXT NOT NULL,
        seconds INTEGER NOT NULL,
        size TEXT NOT NULL,
        cost_usd REAL NOT NULL,
        -- path of the stored first frame (video.from_image)
        input_image TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE TABLE media_jobs (
        id TEXT PRIMARY KEY,
        quote_id TEXT NOT NULL UNIQUE REFERENCES media_quotes (id),
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        operation TEXT NOT NULL,
        prompt TEXT NOT NULL,
        seconds INTEGER NOT NULL,
        size TEXT NOT NULL,
        cost_usd REAL NOT NULL,
        status TEXT NOT NULL,
        progress INTEGER NOT NULL DEFAULT 0,
        remote_id TEXT,
        created_at INTEGER NOT NULL,
        submitted_at INTEGER,
        completed_at INTEGER,
        remote_expires_at INTEGER,
        artifact TEXT,
        error_json TEXT
      );
      CREATE INDEX media_jobs_created ON media_jobs (created_at DESC);
`,
};
