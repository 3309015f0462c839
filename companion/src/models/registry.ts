/**
 * The local model registry: every GGUF Hearth can run, from its own models folders and
 * (read-only) from other apps' download folders, with stable readable ids.
 *
 * Id scheme (ids never contain '/', which is reserved for "<provider>/<model>"):
 *  1. base id: the file stem lowercased, chars outside [a-z0-9._:-] -> '-', shard suffix
 *     removed; Ollama models are `<name>:<tag>` (`<namespace>.<name>:<tag>` outside the
 *     library namespace, `<registry>.<namespace>.<name>:<tag>` for other registries);
 *  2. two models of one source with the same base id are all renamed `<folder>.<base>`
 *     (folder = parent folder; for the Hugging Face cache, the repo name);
 *  3. models-dir owns its ids; another source's model whose id is taken by models-dir,
 *     or shared with a third source, is renamed `<source>.<id>`;
 *  4. anything still equal gets `-2`, `-3`, ... in (source, path) order.
 */
import { realpath } from 'node:fs/promises';
import { compare, discoverCandidates, type Candidate } from './discovery.js';
import { pruneGgufSummaryCache, readGgufSummary, type GgufSummary } from './gguf-metadata.js';
import { pairProjector } from './projectors.js';
import type { LocalModel, ModelSource, ScanOptions } from './types.js';

export type { LocalModel, ModelSource, ScanOptions } from './types.js';

const SOURCE_ORDER: ModelSource[] = ['models-dir', 'lmstudio', 'ollama', 'huggingface', 'llama.cpp'];
const READ_CONCURRENCY = 4;

/** Lists every local model, sorted by id; the same files always give the same result. */
export async function scanModels(options: ScanOptions): Promise<LocalModel[]> {
  const candidates = await dedupe(await discoverCandidates(options));
  const summaries = await mapLimit(candidates, READ_CONCURRENCY, (candidate) =>
    candidate.error ? Promise.resolve(null) : readGgufSummary(candidate.path, candidate.sizeBytes, candidate.mtimeMs),
  );
  const entries: { candidate: Candidate; summary: GgufSummary | null }[] = [];
  candidates.forEach((candidate, index) => {
    const summary = summaries[index] ?? null;
    if (summary && summary.kind !== 'model') return;
    entries.push({ candidate, summary });
  });
  const ids = assignIds(entries.map((entry) => entry.candidate));
  const models = entries.map(({ candidate, summary }, index): LocalModel => {
    const model: LocalModel = {
      id: ids[index]!,
      path: candidate.path,
      source: candidate.source,
      sizeBytes: candidate.sizeBytes,
      contextLength: summary?.contextLength ?? null,
      architecture: summary?.architecture ?? null,
      capabilities: summary?.error || !summary ? [] : summary.capabilities,
    };
    const error = candidate.error ?? summary?.error;
    if (error) model.error = error;
    return model;
  });
  const paired = await mapLimit(models, READ_CONCURRENCY, (model, index) => {
    const { candidate, summary } = entries[index]!;
    return pairProjector(model, summary?.embeddingLength ?? null, candidate.projectors, options.projectors?.[model.id]);
  });
  const projectorPaths = [
    ...candidates.flatMap((candidate) => candidate.projectors ?? []).map((file) => file.path),
    ...paired.flatMap((model) => (model.projector ? [model.projector.path] : [])),
  ];
  pruneGgufSummaryCache(new Set([...candidates.map((candidate) => candidate.path), ...projectorPaths]));
  return paired.sort((a, b) => compare(a.id, b.id));
}

/**
 * The same file reached twice (a symlink in a models folder, two LM Studio roots) is
 * listed once: under the earliest source, and within it by its real path when one of the
 * paths is the real one. Ollama tags sharing one blob stay separate: they are separate
 * names in Ollama too.
 */
async function dedupe(candidates: Candidate[]): Promise<Candidate[]> {
  const rank = (candidate: Candidate) => SOURCE_ORDER.indexOf(candidate.source);
  const withReal = await Promise.all(candidates.map(async (candidate) => ({ candidate, real: await realpath(candidate.path).catch(() => candidate.path) })));
  withReal.sort(
    (a, b) =>
      rank(a.candidate) - rank(b.candidate) ||
      Number(a.candidate.path !== a.real) - Number(b.candidate.path !== b.real) ||
      compare(a.candidate.path, b.candidate.path),
  );
  const owner = new Map<string, ModelSource>();
  const kept = new Set<Candidate>();
  for (const { candidate, real } of withReal) {
    const seen = owner.get(real);
    if (seen !== undefined && !(seen === 'ollama' && candidate.source === 'ollama')) continue;
    owner.set(real, candidate.source);
    kept.add(candidate);
  }
  return [...kept].sort((a, b) => rank(a) - rank(b) || compare(a.path, b.path));
}

/** Ids for candidates (already in source, path order), same index as the input. */
export function assignIds(candidates: Candidate[]): string[] {
  // 2. collisions inside one source: qualify with the folder.
  const ids = candidates.map((candidate) => candidate.baseId);
  const bySource = groupIndexes(candidates, (candidate, index) => `${candidate.source}\u0000${ids[index]}`);
  for (const indexes of bySource.values()) {
    if (indexes.length < 2) continue;
    for (const index of indexes) {
      const { qualifier, baseId } = candidates[index]!;
      if (qualifier !== '') ids[index] = `${qualifier}.${baseId}`;
    }
  }
  // 3. across sources: models-dir keeps the bare id; other apps take their source prefix.
  const reserved = new Set(ids.filter((_, index) => candidates[index]!.source === 'models-dir'));
  const external = groupIndexes(candidates, (candidate, index) => (candidate.source === 'models-dir' ? null : ids[index]!));
  for (const [id, indexes] of external) {
    const sources = new Set(indexes.map((index) => candidates[index]!.source));
    if (!reserved.has(id) && sources.size < 2) continue;
    for (const index of indexes) ids[index] = `${candidates[index]!.source}.${id}`;
  }
  // 4. whatever is still equal: numbered, in input order.
  const used = new Set<string>();
  const all = new Set(ids);
  return ids.map((id) => {
    let unique = id;
    let n = 2;
    while (used.has(unique)) {
      unique = `${id}-${n++}`;
      if (all.has(unique)) unique = id; // another model owns this name outright: keep counting
    }
    used.add(unique);
    return unique;
  });
}

function groupIndexes<T>(items: T[], key: (item: T, index: number) => string | null): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => {
    const k = key(item, index);
    if (k === null) return;
    groups.set(k, [...(groups.get(k) ?? []), index]);
  });
  return groups;
}

async function mapLimit<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
