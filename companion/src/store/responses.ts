import { HearthError } from '../errors.js';
import type { Db } from './database.js';
import type { InputItem, ResponseObject } from '#shared/api/responses.js';

interface ChainRow {
  input_json: string;
  body_json: string;
}

/**
 * Stored responses, so previous_response_id and GET /v1/responses/{id} work across restarts.
 * Each row keeps the items its request added (instructions excluded: the protocol does not
 * carry them over) and the whole Response object, whose output completes the turn.
 */
export class ResponseStore {
  private readonly insert;
  private readonly select;
  private readonly chain;
  private readonly remove;
  private readonly inputs;

  constructor(db: Db) {
    // A previous response deleted meanwhile is recorded as no predecessor rather than failing the save.
    this.insert = db.prepare<[string, number, string, string | null, string, string]>(
      'INSERT INTO responses (id, created_at, model, previous_response_id, input_json, body_json) VALUES (?, ?, ?, (SELECT id FROM responses WHERE id = ?), ?, ?)',
    );
    this.select = db.prepare<[string], { body_json: string }>('SELECT body_json FROM responses WHERE id = ?');
    this.chain = db.prepare<[string], ChainRow>(`
      WITH RECURSIVE chain(id, previous_response_id, input_json, body_json, depth) AS (
        SELECT id, previous_response_id, input_json, body_json, 0 FROM responses WHERE id = ?
        UNION ALL
        SELECT responses.id, responses.previous_response_id, responses.input_json, responses.body_json, chain.depth + 1
        FROM responses JOIN chain ON responses.id = chain.previous_response_id
      )
      SELECT input_json, body_json FROM chain ORDER BY depth DESC`);
    this.remove = db.prepare<[string]>('DELETE FROM responses WHERE id = ?');
    this.inputs = db.prepare<[string], { input_json: string }>('SELECT input_json FROM responses WHERE id = ?');
  }

  /** Commits a finished response with the input items of its request. */
  save(response: ResponseObject, inputItems: InputItem[]): void {
    this.insert.run(response.id, response.created_at, response.model, response.previous_response_id, JSON.stringify(inputItems), JSON.stringify(response));
  }

  get(id: string): ResponseObject | undefined {
    const row = this.select.get(id);
    return row ? (JSON.parse(row.body_json) as ResponseObject) : undefined;
  }

  /** The items the request of a stored response added (its own input, not the earlier turns), oldest first. */
  inputItems(id: string): InputItem[] | undefined {
    const row = this.inputs.get(id);
    return row ? (JSON.parse(row.input_json) as InputItem[]) : undefined;
  }

  /** The conversation up to and including `previousId`: each response's inputs then outputs, oldest first. */
  conversation(previousId: string): InputItem[] {
    const rows = this.chain.all(previousId);
    if (rows.length === 0) {
      throw new HearthError('response_not_found', `No stored response has the id "${previousId}". Responses created with store: false cannot be continued.`, {
        param: 'previous_response_id',
      });
    }
    return rows.flatMap((row) => [...(JSON.parse(row.input_json) as InputItem[]), ...(JSON.parse(row.body_json) as ResponseObject).output]);
  }

  /** Deletes one response; later responses that continued it keep their own items only. */
  delete(id: string): boolean {
    return this.remove.run(id).changes > 0;
  }
}
