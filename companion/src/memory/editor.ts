import { HearthError } from '../errors.js';
import type { Db } from '../store/database.js';
import type { MemoryFactUpdate } from '#shared/api/memory.js';
import type { MemoryRecords } from './records.js';
import { checkAgentId } from './validate.js';

const MAX_FACT_CHARS = 2000;
const MAX_IDENTITY_KEY = 64;
const MAX_IDENTITY_VALUE = 1000;

/** Edits a person (or an agent's pin tool) makes to pinned facts and identity entries. */
export class MemoryEditor {
  constructor(
    private readonly db: Db,
    private readonly records: MemoryRecords,
    /** Called with a fact whose text is new or changed (its vector must be made again). */
    private readonly onFactChanged: (id: number) => void = () => undefined,
  ) {}

  /** Pins a fact; a duplicate of an existing fact pins and supports that one instead. */
  pin(agentId: string, text: string): { id: number; merged: boolean } {
    checkAgentId(agentId);
    const clean = checkText(text, 'text', MAX_FACT_CHARS);
    const pinned = this.db.transaction(() => this.records.addFact(agentId, clean, { status: 'pinned', source: 'user' }))();
    this.onFactChanged(pinned.id);
    return pinned;
  }

  updateFact(agentId: string, id: number, change: MemoryFactUpdate): void {
    checkAgentId(agentId);
    const exists = this.db.prepare('SELECT 1 FROM memory_facts WHERE agent_id = ? AND id = ?').get(agentId, id);
    if (!exists) throw notFound(agentId, `fact_${id}`);
    const now = Date.now();
    if (change.text !== undefined) {
      this.db
        .prepare(`UPDATE memory_facts SET text = ?, source = 'user', updated_at = ? WHERE id = ?`)
        .run(checkText(change.text, 'text', MAX_FACT_CHARS), now, id);
      this.onFactChanged(id);
    }
    if (change.status !== undefined)
      this.db
        .prepare('UPDATE memory_facts SET status = ?, updated_at = ?, salience = MAX(salience, 1), decayed_at = ? WHERE id = ?')
        .run(change.status, now, now, id);
  }

  deleteFact(agentId: string, id: number): void {
    checkAgentId(agentId);
    if (this.db.prepare('DELETE FROM memory_facts WHERE agent_id = ? AND id = ?').run(agentId, id).changes === 0) throw notFound(agentId, `fact_${id}`);
  }

  setIdentity(agentId: string, key: string, value: string): void {
    checkAgentId(agentId);
    this.records.setIdentity(agentId, checkText(key, 'key', MAX_IDENTITY_KEY), checkText(value, 'value', MAX_IDENTITY_VALUE), 'user');
  }

  deleteIdentity(agentId: string, key: string): void {
    checkAgentId(agentId);
    if (this.db.prepare('DELETE FROM memory_identity WHERE agent_id = ? AND key = ?').run(agentId, key).changes === 0)
      throw notFound(agentId, `identity entry "${key}"`);
  }
}

function checkText(value: string, param: string, max: number): string {
  const text = value.trim();
  if (!text) throw new HearthError('invalid_request_error', `${param} must not be empty.`, { param });
  if (text.length > max) throw new HearthError('invalid_request_error', `${param} must be at most ${max} characters.`, { param });
  return text;
}

function notFound(agentId: string, what: string): HearthError {
  return new HearthError('memory_record_not_found', `Agent "${agentId}" has no ${what}.`, { param: 'id' });
}
