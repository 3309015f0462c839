/**
 * Conversations that survive a restart of their model's llama-server process: a slot's state
 * (its KV cache and the tokens it holds) saved to a file in the model's own 0700 folder under the
 * data folder (`engine/slots/<model-key>/`, files 0600), with an index of the tokens each file
 * holds. A later request whose prompt shares its longest prefix with a file (never a name a
 * client sent) gets that file restored into a slot first, so only its new tokens are evaluated.
 * A file that does not load (another llama.cpp version, corruption, another model) is deleted and
 * the turn reads its history as it would have. Files past the disk budget go least recently used first.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../logger.js';
import type { ServerClient } from './client.js';

/** A saved state shorter than this is not worth a file (reading it again costs little). */
export const MIN_SAVED_TOKENS = 32;
const INDEX = 'index.json';

export interface SavedSlot {
  /** The file's name in the folder (Hearth's own, random). */
  file: string;
  /** The tokens the state holds, in order. */
  tokens: number[];
  bytes: number;
  /** When it was last saved or restored (ms since the epoch): the least recent goes first. */
  used: number;
}

/** The folder of a model's saved slots: its id made safe for a file name, and a hash of its file's path and size. */
export function slotFolder(runDir: string, id: string, path: string, sizeBytes: number): string {
  const hash = createHash('sha256').update(`${path}\0${sizeBytes}`).digest('hex').slice(0, 12);
  const name = id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);
  return join(runDir, 'slots', `${name}-${hash}`);
}

/** How many leading tokens two sequences share. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const end = Math.min(a.length, b.length);
  let index = 0;
  while (index < end && a[index] === b[index]) index++;
  return index;
}

export interface SlotUsage {
  files: number;
  /** Their bytes, indexes included. */
  bytes: number;
  /** Per model folder: its model's id (as made safe for a file name) and what it holds. */
  models: { model: string; files: number; bytes: number }[];
}

/** The saved conversation states under a run folder, every model's: how many files, and their bytes. */
export function slotUsage(runDir: string): SlotUsage {
  const root = join(runDir, 'slots');
  const usage: SlotUsage = { files: 0, bytes: 0, models: [] };
  if (!existsSync(root)) return usage;
  for (const folder of readdirSync(root)) {
    const held = { model: folder.replace(/-[0-9a-f]{12}$/, ''), files: 0, bytes: 0 };
    for (const file of readdirSync(join(root, folder))) {
      held.bytes += statSync(join(root, folder, file)).size;
      if (file !== INDEX) held.files++;
    }
    usage.files += held.files;
    usage.bytes += held.bytes;
    if (held.files > 0) usage.models.push(held);
  }
  return usage;
}

/**
 * Removes every model's saved slots under a run folder (`hearth engine cache clear`, and the
 * Server screen's Clear); returns the bytes freed. The stores of models loaded now are emptied in
 * place, so their processes keep their folders and save again from here on.
 */
export function clearSlotFolders(runDir: string, loaded: readonly SlotStore[] = []): number {
  const root = join(runDir, 'slots');
  const before = slotUsage(runDir).bytes;
  for (const store of loaded) store.clear();
  if (!existsSync(root)) return before;
  const kept = new Set(loaded.map((store) => store.folder));
  for (const folder of readdirSync(root)) if (!kept.has(join(root, folder))) rmSync(join(root, folder), { recursive: true, force: true });
  if (kept.size === 0) rmSync(root, { recursive: true, force: true });
  return before - slotUsage(runDir).bytes;
}

export class SlotStore {
  private entries: SavedSlot[];

  constructor(
    /** The folder llama-server is started with (`--slot-save-path`). */
    readonly folder: string,
    private readonly budgetBytes: () => number,
    private readonly log: Logger,
  ) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
    this.entries = this.readIndex();
  }

  get saved(): readonly SavedSlot[] {
    return this.entries;
  }

  get bytes(): number {
    return this.entries.reduce((sum, entry) => sum + entry.bytes, 0);
  }

  /** The saved state sharing the longest prefix with a prompt, when that prefix is worth restoring. */
  match(prompt: readonly number[]): { entry: SavedSlot; shared: number } | undefined {
    let best: { entry: SavedSlot; shared: number } | undefined;
    for (const entry of this.entries) {
      const shared = commonPrefix(entry.tokens, prompt);
      if (shared >= MIN_SAVED_TOKENS && shared > (best?.shared ?? 0)) best = { entry, shared };
    }
    return best;
  }

  /** Saves a slot's state holding `tokens`; a failure is logged and changes nothing. */
  async save(client: ServerClient, slot: number, tokens: readonly number[], used = Date.now()): Promise<void> {
    if (tokens.length < MIN_SAVED_TOKENS || this.budgetBytes() <= 0) return;
    // The same state saved already (the conversation has not moved since it was restored or saved).
    if (this.entries.some((entry) => entry.tokens.length === tokens.length && commonPrefix(entry.tokens, tokens) === tokens.length)) return;
    const file = `slot-${randomBytes(8).toString('hex')}.bin`;
    try {
      const answer = await client.json<{ n_saved?: number; n_written?: number }>('POST', `/slots/${slot}?action=save`, { filename: file });
      const path = join(this.folder, file);
      chmodSync(path, 0o600);
      // The server's count is what the file holds; what Hearth tracked can be a token longer (the last one generated).
      const held = tokens.slice(0, Math.min(tokens.length, answer.n_saved ?? tokens.length));
      // An older state of the same conversation is superseded.
      for (const entry of this.entries.filter((entry) => commonPrefix(entry.tokens, held) === entry.tokens.length)) this.remove(entry);
      this.entries.push({ file, tokens: held, bytes: answer.n_written ?? statSync(path).size, used });
      this.evict();
      this.writeIndex();
    } catch (error) {
      rmSync(join(this.folder, file), { force: true });
      this.log.warn({ slot, error: error instanceof Error ? error.message : String(error) }, 'could not save a conversation slot');
    }
  }

  /** Restores a saved state into a slot; false (and the file deleted) when it does not load. */
  async restore(client: ServerClient, slot: number, entry: SavedSlot): Promise<boolean> {
    try {
      await client.json('POST', `/slots/${slot}?action=restore`, { filename: entry.file });
      entry.used = Date.now();
      this.writeIndex();
      return true;
    } catch (error) {
      this.log.warn({ slot, error: error instanceof Error ? error.message : String(error) }, 'a saved conversation slot did not load; deleted');
      this.remove(entry);
      this.writeIndex();
      return false;
    }
  }

  /** Deletes every saved state of this model. */
  clear(): void {
    for (const entry of [...this.entries]) this.remove(entry);
    this.writeIndex();
  }

  private remove(entry: SavedSlot): void {
    rmSync(join(this.folder, entry.file), { force: true });
    this.entries = this.entries.filter((other) => other !== entry);
  }

  /** Least recently used first, until the files fit the budget. */
  private evict(): void {
    const budget = this.budgetBytes();
    const byAge = [...this.entries].sort((a, b) => a.used - b.used);
    while (this.bytes > budget && byAge.length > 0) this.remove(byAge.shift()!);
  }

  private readIndex(): SavedSlot[] {
    const path = join(this.folder, INDEX);
    let entries: SavedSlot[] = [];
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      if (Array.isArray(parsed)) entries = parsed.filter(isSavedSlot);
    } catch {
      // No index yet, or an unreadable one: the files it named are swept below.
    }
    entries = entries.filter((entry) => existsSync(join(this.folder, entry.file)));
    // Files no entry names (a save cut off by a crash, an index lost) are deleted.
    const named = new Set([INDEX, ...entries.map((entry) => entry.file)]);
    for (const file of readdirSync(this.folder)) if (!named.has(file)) rmSync(join(this.folder, file), { force: true });
    return entries;
  }

  private writeIndex(): void {
    const path = join(this.folder, INDEX);
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.entries), { mode: 0o600 });
    renameSync(temporary, path);
  }
}

function isSavedSlot(value: unknown): value is SavedSlot {
  const entry = value as SavedSlot;
  return (
    typeof entry === 'object' &&
    entry !== null &&
    typeof entry.file === 'string' &&
    /^slot-[0-9a-f]{16}\.bin$/.test(entry.file) &&
    Array.isArray(entry.tokens) &&
    typeof entry.bytes === 'number' &&
    typeof entry.used === 'number'
  );
}
