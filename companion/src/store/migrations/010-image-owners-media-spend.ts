import type { Migration } from './migration.js';

/**
 * Migration 10: image jobs, media quotes and media jobs remember the access key that made them
 * (NULL: made without a key), so a key sees only its own; a media job records whether Hearth
 * knows the provider never created it (only those are left out of the month's spending).
 */
export const migration: Migration = {
  version: 10,
  name: 'image and media owners, media spend',
  sql: `
      ALTER TABLE image_jobs ADD COLUMN owner_key TEXT;
      CREATE INDEX image_jobs_owner ON image_jobs (owner_key, created_at DESC);
      ALTER TABLE media_quotes ADD COLUMN owner_key TEXT;
      ALTER TABLE media_jobs ADD COLUMN owner_key TEXT;
      -- 1 only when the provider clearly refused the job or has no record of it
      ALTER TABLE media_jobs ADD COLUMN not_created INTEGER NOT NULL DEFAULT 0;
      UPDATE media_jobs SET not_created = 1
        WHERE status = 'failed' AND remote_id IS NULL AND json_extract(error_json, '$.code') = 'not_submitted';
`,
};
