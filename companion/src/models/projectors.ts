/**
 * Pairing a model with its multimodal projector (`mmproj`): the one named in its overrides
 * (`models.overrides.<id>.projector`, or `none`), else one found beside it. A projector turns an
 * image or a sound into embeddings of the text model's width, so one made for another model (of
 * another embedding size) is refused here, with the reason, instead of failing when llama-server
 * starts; the model is then listed on text only.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Capability } from '#shared/api/openai.js';
import type { FoundFile } from './discovery.js';
import { readGgufSummary, type GgufSummary } from './gguf-metadata.js';
import type { LocalModel, ProjectorFile } from './types.js';

/** What a projector is and whether it fits a model of `width` (null: unknown), or why not. */
async function readProjector(file: FoundFile, width: number | null): Promise<ProjectorFile | { problem: string }> {
  const name = path.basename(file.path);
  const summary: GgufSummary = await readGgufSummary(file.path, file.sizeBytes, file.mtimeMs);
  if (summary.error) return { problem: `the projector ${name} cannot be read: ${summary.error}` };
  if (summary.kind !== 'projector' || !summary.modalities)
    return { problem: `${name} is not a multimodal projector (its architecture is ${summary.architecture ?? 'unknown'})` };
  const { vision, audio } = summary.modalities;
  if (!vision && !audio) return { problem: `the projector ${name} has neither an image nor an audio encoder` };
  const output = summary.embeddingLength ?? null;
  if (width !== null && output !== null && output !== width)
    return {
      problem: `the projector ${name} makes embeddings ${output} wide and the model takes ${width}: it was made for another model (download the mmproj file from the model's own repository)`,
    };
  return { path: file.path, sizeBytes: file.sizeBytes, vision, audio };
}

/** How alike a projector's file name is to the model's: the length of their common start, ignoring "mmproj" and separators. */
function likeness(model: string, projector: string): number {
  const plain = (file: string) =>
    path
      .basename(file)
      .toLowerCase()
      .replace(/\.gguf$/, '')
      .replace(/mmproj/g, '')
      .replace(/[^a-z0-9]+/g, '');
  const [a, b] = [plain(model), plain(projector)];
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same++;
  return same;
}

/** The projector a model loads with, or why none; `configured` is its override (a path, or 'none'). */
export async function chooseProjector(
  modelPath: string,
  width: number | null,
  found: FoundFile[] | undefined,
  configured: string | undefined,
): Promise<{ projector?: ProjectorFile; problem?: string }> {
  if (configured === 'none') return {};
  if (configured !== undefined) {
    const info = await stat(configured).catch(() => null);
    if (!info?.isFile()) return { problem: `the projector set for it (${configured}) is not a file` };
    const read = await readProjector({ path: configured, sizeBytes: info.size, mtimeMs: info.mtimeMs }, width);
    return 'problem' in read ? { problem: read.problem } : { projector: read };
  }
  if (!found?.length) return {};
  const ranked = [...found].sort((a, b) => likeness(modelPath, b.path) - likeness(modelPath, a.path));
  const problems: string[] = [];
  for (const file of ranked) {
    const read = await readProjector(file, width);
    if (!('problem' in read)) return { projector: read };
    problems.push(read.problem);
  }
  return { problem: problems.join('; ') };
}

/** A chat model with a projector can also see (vision) or hear (audio). */
export function withMediaCapabilities(capabilities: Capability[], projector: ProjectorFile | undefined): Capability[] {
  if (!projector || !capabilities.includes('chat')) return capabilities;
  return [...capabilities, ...(projector.vision ? (['vision'] as const) : []), ...(projector.audio ? (['audio'] as const) : [])];
}

/** The model with its projector paired (or the reason it has none); a model that cannot be used as found is left alone. */
export async function pairProjector(
  model: LocalModel,
  width: number | null,
  found: FoundFile[] | undefined,
  configured: string | undefined,
): Promise<LocalModel> {
  if (model.error || !model.capabilities.includes('chat')) return model;
  const { projector, problem } = await chooseProjector(model.path, width, found, configured);
  const paired: LocalModel = { ...model, capabilities: withMediaCapabilities(model.capabilities, projector) };
  if (projector) paired.projector = projector;
  if (problem) paired.projectorProblem = problem;
  return paired;
}
