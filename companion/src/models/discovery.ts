/**
 * Finding GGUF files on disk: Hearth's own models folders and, read-only, the folders
 * other local apps download into (LM Studio, Ollama, the Hugging Face hub cache,
 * llama.cpp's cache). Nothing here reads GGUF metadata or decides final ids; see
 * registry.ts for that.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ModelSource, ScanOptions } from './types.js';

/** One model found on disk, before metadata and final ids. */
export interface Candidate {
  source: ModelSource;
  /** Absolute path of the .gguf (first shard of a split model; an Ollama blob). */
  path: string;
  /** The readable id this model would get if nothing else claimed it. */
  baseId: string;
  /** Prefix used (as `qualifier.baseId`) when two models of the same source share a baseId. */
  qualifier: string;
  sizeBytes: number;
  mtimeMs: number;
  /** Set when the model cannot be used as found (incomplete split, missing blob). */
  error?: string;
  /** Multimodal projector files found with it (`mmproj-*.gguf` in its folder, Ollama's projector layer); projectors.ts picks one. */
  projectors?: FoundFile[];
}

export interface FoundFile {
  path: string;
  sizeBytes: number;
  mtimeMs: number;
}

const SHARD_PATTERN = /-(\d{5})-of-(\d{5})\.gguf$/i;
const GGUF_PATTERN = /\.gguf$/i;
const OLLAMA_MODEL_LAYER = 'application/vnd.ollama.image.model';
const OLLAMA_PROJECTOR_LAYER = 'application/vnd.ollama.image.projector';
const MAX_MANIFEST_BYTES = 1024 * 1024;

/** Lowercase, chars outside [a-z0-9._:-] become '-', no runs or edges of '-'/'.'. */
export function toIdPart(text: string): string {
  const id = text
    .toLowerCase()
    .replace(/[^a-z0-9._:-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.:]+|[-.:]+$/g, '');
  return id === '' ? 'model' : id;
}

/** File name without `.gguf` and without a `-0000N-of-0000M` shard suffix. */
export function ggufStem(fileName: string): string {
  return fileName.replace(SHARD_PATTERN, '').replace(GGUF_PATTERN, '');
}

export function isProjectorFileName(fileName: string): boolean {
  return fileName.toLowerCase().includes('mmproj');
}

/** All candidates from every enabled source, in source order, each source sorted by path. */
export async function discoverCandidates(options: ScanOptions): Promise<Candidate[]> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const home = options.home ?? (platform === 'win32' ? env.USERPROFILE : env.HOME) ?? os.homedir();
  const found: Candidate[] = [];
  for (const dir of options.modelsDirs) {
    found.push(...(await fromFolder(path.resolve(dir), 'models-dir', 8)));
  }
  if (!options.externalSources) return found;
  for (const dir of await lmStudioRoots(home)) found.push(...(await fromFolder(dir, 'lmstudio', 4)));
  for (const dir of ollamaRoots(home, env, platform, options.home === undefined)) found.push(...(await fromOllama(dir)));
  found.push(...(await fromHuggingFace(huggingFaceRoot(home, env, platform))));
  found.push(...(await fromFolder(llamaCppRoot(home, env, platform), 'llama.cpp', 3)));
  return found;
}

// ---------------------------------------------------------------- locations

async function lmStudioRoots(home: string): Promise<string[]> {
  const roots: string[] = [];
  // LM Studio lets users move its data folder; the new place is written in this file.
  const pointer = await readFile(path.join(home, '.lmstudio-home-pointer'), 'utf8').catch(() => null);
  const pointed = pointer?.trim();
  if (pointed && path.isAbsolute(pointed)) roots.push(path.join(pointed, 'models'));
  roots.push(path.join(home, '.lmstudio', 'models'), path.join(home, '.cache', 'lm-studio', 'models'));
  return uniqueRealDirs(roots);
}

function ollamaRoots(home: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform, realHome: boolean): string[] {
  if (env.OLLAMA_MODELS) return [path.resolve(env.OLLAMA_MODELS)];
  const roots = [path.join(home, '.ollama', 'models')];
  // The Linux installer runs Ollama as its own user whose home is /usr/share/ollama.
  if (platform === 'linux' && realHome) roots.push('/usr/share/ollama/.ollama/models');
  return roots;
}

function huggingFaceRoot(home: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  const hubCache = env.HF_HUB_CACHE ?? env.HUGGINGFACE_HUB_CACHE;
  if (hubCache) return path.resolve(hubCache);
  if (env.HF_HOME) return path.join(path.resolve(env.HF_HOME), 'hub');
  const cache = platform !== 'win32' && env.XDG_CACHE_HOME ? env.XDG_CACHE_HOME : path.join(home, '.cache');
  return path.join(cache, 'huggingface', 'hub');
}

/** Mirrors llama.cpp's fs_get_cache_directory(). */
function llamaCppRoot(home: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  if (env.LLAMA_CACHE) return path.resolve(env.LLAMA_CACHE);
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches', 'llama.cpp');
  if (platform === 'win32') return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'llama.cpp');
  return path.join(env.XDG_CACHE_HOME ?? path.join(home, '.cache'), 'llama.cpp');
}

async function uniqueRealDirs(dirs: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const dir of dirs) {
    const real = await realpath(dir).catch(() => null);
    if (real === null || seen.has(real)) continue;
    seen.add(real);
    result.push(dir);
  }
  return result;
}

// ---------------------------------------------------------------- walking

/** Every *.gguf under root (following symlinks, guarding against loops), sorted by path; projector files go to `projectors` when given. */
async function findGgufFiles(root: string, maxDepth: number, projectors?: FoundFile[]): Promise<FoundFile[]> {
  const files: FoundFile[] = [];
  const visited = new Set<string>();
  async function walk(dir: string, depth: number): Promise<void> {
    const real = await realpath(dir).catch(() => null);
    if (real === null || visited.has(real)) return;
    visited.add(real);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const target = await stat(full).catch(() => null);
        isDir = target?.isDirectory() ?? false;
        isFile = target?.isFile() ?? false;
      }
      if (isDir && depth < maxDepth) await walk(full, depth + 1);
      else if (isFile && GGUF_PATTERN.test(entry.name)) {
        const projector = isProjectorFileName(entry.name);
        if (projector && !projectors) continue;
        const info = await stat(full).catch(() => null);
        if (info) (projector ? projectors! : files).push({ path: full, sizeBytes: info.size, mtimeMs: info.mtimeMs });
      }
    }
  }
  await walk(root, 0);
  projectors?.sort((a, b) => compare(a.path, b.path));
  return files.sort((a, b) => compare(a.path, b.path));
}

/** The projector files in the model's own folder (the Hugging Face, LM Studio and llama.cpp layouts put them beside it). */
function besideModel(model: string, projectors: FoundFile[]): FoundFile[] | undefined {
  const folder = path.dirname(model);
  const beside = projectors.filter((file) => path.dirname(file.path) === folder);
  return beside.length > 0 ? beside : undefined;
}

interface ModelFiles {
  /** First shard (or the lowest part present when part 1 is missing). */
  first: FoundFile;
  sizeBytes: number;
  mtimeMs: number;
  error?: string;
}

/** Folds the parts of split models (`name-0000N-of-0000M.gguf`) into one entry. */
function groupShards(files: FoundFile[]): ModelFiles[] {
  const single: ModelFiles[] = [];
  const groups = new Map<string, { total: number; parts: Map<number, FoundFile> }>();
  for (const file of files) {
    const match = SHARD_PATTERN.exec(file.path);
    const part = match ? Number(match[1]) : 0;
    const total = match ? Number(match[2]) : 0;
    if (!match || part < 1 || total < 1 || part > total) {
      single.push({ first: file, sizeBytes: file.sizeBytes, mtimeMs: file.mtimeMs });
      continue;
    }
    const key = `${file.path.slice(0, match.index).toLowerCase()}\u0000${total}`;
    const group = groups.get(key) ?? { total, parts: new Map<number, FoundFile>() };
    group.parts.set(part, file);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    const parts = [...group.parts.entries()].sort((a, b) => a[0] - b[0]);
    const entry: ModelFiles = {
      first: parts[0]![1],
      sizeBytes: parts.reduce((sum, [, file]) => sum + file.sizeBytes, 0),
      mtimeMs: Math.max(...parts.map(([, file]) => file.mtimeMs)),
    };
    if (parts.length !== group.total) {
      entry.error = `split model is incomplete: found ${parts.length} of ${group.total} parts`;
    }
    single.push(entry);
  }
  return single.sort((a, b) => compare(a.first.path, b.first.path));
}

function candidate(source: ModelSource, files: ModelFiles, qualifier: string, baseId?: string): Candidate {
  const result: Candidate = {
    source,
    path: files.first.path,
    baseId: baseId ?? toIdPart(ggufStem(path.basename(files.first.path))),
    qualifier: qualifier === '' ? '' : toIdPart(qualifier),
    sizeBytes: files.sizeBytes,
    mtimeMs: files.mtimeMs,
  };
  if (files.error) result.error = files.error;
  return result;
}

/** A plain folder of .gguf files (models dir, LM Studio, llama.cpp cache). */
async function fromFolder(root: string, source: ModelSource, maxDepth: number): Promise<Candidate[]> {
  const projectors: FoundFile[] = [];
  const models = groupShards(await findGgufFiles(root, maxDepth, projectors));
  return models.map((files) =>
    withProjectors(candidate(source, files, path.basename(path.dirname(files.first.path))), besideModel(files.first.path, projectors)),
  );
}

function withProjectors(found: Candidate, projectors: FoundFile[] | undefined): Candidate {
  if (projectors) found.projectors = projectors;
  return found;
}

// ---------------------------------------------------------------- Ollama

interface OllamaManifest {
  layers?: { mediaType?: string; digest?: string; size?: number }[];
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort(compare);
}

/** manifests/<registry>/<namespace>/<name>/<tag> -> the model layer's blob. */
async function fromOllama(root: string): Promise<Candidate[]> {
  const found: Candidate[] = [];
  const manifests = path.join(root, 'manifests');
  for (const registry of await subdirectories(manifests)) {
    for (const namespace of await subdirectories(path.join(manifests, registry))) {
      for (const name of await subdirectories(path.join(manifests, registry, namespace))) {
        const tagDir = path.join(manifests, registry, namespace, name);
        const tags = await readdir(tagDir, { withFileTypes: true }).catch(() => []);
        for (const tag of tags.sort((a, b) => compare(a.name, b.name))) {
          if (!tag.isFile()) continue;
          const model = await ollamaModel(root, path.join(tagDir, tag.name), ollamaId(registry, namespace, name, tag.name));
          if (model) found.push(model);
        }
      }
    }
  }
  return found;
}

function ollamaId(registry: string, namespace: string, name: string, tag: string): string {
  const repo = toIdPart(name);
  const prefix =
    registry === 'registry.ollama.ai' ? (namespace === 'library' ? '' : `${toIdPart(namespace)}.`) : `${toIdPart(registry)}.${toIdPart(namespace)}.`;
  return `${prefix}${repo}:${toIdPart(tag)}`;
}

async function ollamaModel(root: string, manifestPath: string, id: string): Promise<Candidate | null> {
  const info = await stat(manifestPath).catch(() => null);
  if (!info || info.size > MAX_MANIFEST_BYTES) return null;
  let manifest: OllamaManifest;
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as OllamaManifest;
  } catch {
    return null;
  }
  const layer = manifest.layers?.find((entry) => entry.mediaType === OLLAMA_MODEL_LAYER);
  const digest = /^sha256:([a-f0-9]{64})$/i.exec(layer?.digest ?? '');
  if (!digest) return null;
  const blob = path.join(root, 'blobs', `sha256-${digest[1]}`);
  const blobInfo = await stat(blob).catch(() => null);
  const files: ModelFiles = {
    first: { path: blob, sizeBytes: blobInfo?.size ?? 0, mtimeMs: blobInfo?.mtimeMs ?? 0 },
    sizeBytes: blobInfo?.size ?? 0,
    mtimeMs: blobInfo?.mtimeMs ?? 0,
  };
  if (!blobInfo?.isFile()) files.error = `Ollama blob sha256-${digest[1]} is missing`;
  return withProjectors(candidate('ollama', files, '', id), await ollamaProjector(root, manifest));
}

/** The blob of a manifest's projector layer (Ollama's vision models keep their mmproj there), when it is on disk. */
async function ollamaProjector(root: string, manifest: OllamaManifest): Promise<FoundFile[] | undefined> {
  const layer = manifest.layers?.find((entry) => entry.mediaType === OLLAMA_PROJECTOR_LAYER);
  const digest = /^sha256:([a-f0-9]{64})$/i.exec(layer?.digest ?? '');
  if (!digest) return undefined;
  const blob = path.join(root, 'blobs', `sha256-${digest[1]}`);
  const info = await stat(blob).catch(() => null);
  return info?.isFile() ? [{ path: blob, sizeBytes: info.size, mtimeMs: info.mtimeMs }] : undefined;
}

// ---------------------------------------------------------------- Hugging Face hub cache

/** models--<org>--<repo>/snapshots/<rev>/**.gguf, one snapshot per repo (refs/main, else the newest). */
async function fromHuggingFace(root: string): Promise<Candidate[]> {
  const found: Candidate[] = [];
  for (const folder of await subdirectories(root)) {
    const parts = folder.split('--');
    if (parts[0] !== 'models' || parts.length < 3) continue;
    const repo = parts.slice(2).join('--');
    const snapshot = await chooseSnapshot(path.join(root, folder));
    if (!snapshot) continue;
    const projectors: FoundFile[] = [];
    for (const files of groupShards(await findGgufFiles(snapshot, 6, projectors)))
      found.push(withProjectors(candidate('huggingface', files, repo), besideModel(files.first.path, projectors)));
  }
  return found;
}

async function chooseSnapshot(repoDir: string): Promise<string | null> {
  const snapshots = path.join(repoDir, 'snapshots');
  const main = (await readFile(path.join(repoDir, 'refs', 'main'), 'utf8').catch(() => '')).trim();
  if (/^[a-z0-9]+$/i.test(main)) {
    const dir = path.join(snapshots, main);
    if ((await stat(dir).catch(() => null))?.isDirectory()) return dir;
  }
  let best: { dir: string; mtimeMs: number } | null = null;
  for (const revision of await subdirectories(snapshots)) {
    const dir = path.join(snapshots, revision);
    const info = await stat(dir).catch(() => null);
    if (info && (best === null || info.mtimeMs > best.mtimeMs)) best = { dir, mtimeMs: info.mtimeMs };
  }
  return best?.dir ?? null;
}

/** Plain code-unit comparison: the same order on every machine and locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
