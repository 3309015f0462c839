/** What `hearth pull <spec>` means, and which file of a repository it picks. */
import { HearthError } from '../errors.js';

export type PullSpec =
  { kind: 'url'; url: string } | { kind: 'file'; owner: string; repo: string; file: string } | { kind: 'repo'; owner: string; repo: string; quant?: string };

export interface RepoFile {
  /** Path inside the repository (`rfilename`). */
  name: string;
  size: number | null;
}

const SHARD_PATTERN = /-(\d{5})-of-(\d{5})\.gguf$/i;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const HF_HOSTS = new Set(['huggingface.co', 'www.huggingface.co', 'hf.co']);
const USAGE = 'Give owner/repo, owner/repo:QUANT, owner/repo/path/file.gguf or an https URL of a .gguf.';

function invalid(message: string): HearthError {
  return new HearthError('invalid_request_error', `${message} ${USAGE}`, { param: 'spec' });
}

export function parsePullSpec(input: string): PullSpec {
  let spec = input.trim();
  if (/^https?:\/\//i.test(spec)) {
    let url: URL;
    try {
      url = new URL(spec);
    } catch {
      throw invalid(`"${spec}" is not a valid URL.`);
    }
    const segments = url.pathname.split('/').filter((segment) => segment !== '');
    if (HF_HOSTS.has(url.hostname) && segments.length === 2) spec = segments.join('/');
    else {
      // A Hugging Face page link (/blob/) points at the HTML viewer; /resolve/ is the file.
      if (HF_HOSTS.has(url.hostname) && segments[2] === 'blob') {
        url.pathname = '/' + [...segments.slice(0, 2), 'resolve', ...segments.slice(3)].join('/');
      }
      if (!/\.gguf$/i.test(url.pathname)) throw invalid(`"${spec}" does not point at a .gguf file.`);
      return { kind: 'url', url: url.href };
    }
  }
  spec = spec.replace(/^(hf:|hf\.co\/|huggingface\.co\/)/i, '');
  const parts = spec.split('/');
  if (parts.length < 2 || parts.some((part) => part === '')) throw invalid(`"${input}" is not a model spec.`);
  const owner = parts[0]!;
  if (parts.length === 2) {
    const colon = parts[1]!.indexOf(':');
    const repo = colon === -1 ? parts[1]! : parts[1]!.slice(0, colon);
    const quant = colon === -1 ? undefined : parts[1]!.slice(colon + 1);
    checkNames(input, owner, repo);
    if (quant !== undefined && !/^[A-Za-z0-9_.-]+$/.test(quant)) throw invalid(`"${quant}" is not a quantization name.`);
    return quant === undefined ? { kind: 'repo', owner, repo } : { kind: 'repo', owner, repo, quant };
  }
  const repo = parts[1]!;
  checkNames(input, owner, repo);
  const file = parts.slice(2).join('/');
  if (parts.slice(2).some((part) => part === '.' || part === '..')) throw invalid(`"${input}" is not a file path.`);
  if (!/\.gguf$/i.test(file)) throw invalid(`"${file}" is not a .gguf file.`);
  return { kind: 'file', owner, repo, file };
}

function checkNames(input: string, owner: string, repo: string): void {
  if (!NAME_PATTERN.test(owner) || !NAME_PATTERN.test(repo)) throw invalid(`"${input}" is not an owner/repo name.`);
}

/** All part names of a split model (`x-00001-of-00003.gguf` -> parts 1..3), else just the name. */
export function splitPartNames(name: string): string[] {
  const match = SHARD_PATTERN.exec(name);
  if (!match) return [name];
  const count = Number(match[2]);
  const stem = name.slice(0, match.index);
  return Array.from({ length: count }, (_, index) => `${stem}-${String(index + 1).padStart(5, '0')}-of-${match[2]}.gguf`);
}

function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

export interface Choice {
  /** First part (or the only file). */
  name: string;
  size: number | null;
}

/** Is this a multimodal projector (`mmproj`), by its name as discovery tells them apart? */
export function isProjectorName(name: string): boolean {
  return baseName(name).toLowerCase().includes('mmproj');
}

/**
 * The projector to download with `model` from a repository listing, or null when it has none:
 * the `mmproj*.gguf` files in the model's own folder of the repository (else anywhere in it), the
 * F16 one if there is one (llama.cpp's reference precision, and what most uploaders publish),
 * else the smallest.
 */
export function pickProjector(files: RepoFile[], model: string): RepoFile | null {
  const projectors = files.filter((file) => /\.gguf$/i.test(file.name) && isProjectorName(file.name) && !SHARD_PATTERN.test(file.name));
  const folder = (name: string) => name.slice(0, name.lastIndexOf('/') + 1);
  const beside = projectors.filter((file) => folder(file.name) === folder(model));
  const candidates = beside.length > 0 ? beside : projectors;
  if (candidates.length === 0) return null;
  const f16 = candidates.filter((file) => /(?:^|[^a-z0-9])f16(?:[^a-z0-9]|$)/.test(baseName(file.name).toLowerCase()));
  const pool = f16.length > 0 ? f16 : candidates;
  return [...pool].sort((a, b) => (a.size ?? Infinity) - (b.size ?? Infinity) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))[0]!;
}

/**
 * The name a projector from repository `repo` gets in the models folder: `mmproj-` first (how
 * discovery knows it), then the repository's model name unless the file already starts with it,
 * so that two repositories' `mmproj-F16.gguf` do not collide and discovery finds it most alike to
 * the model (`gemma-3-4b-it-GGUF`'s `mmproj-F16.gguf` becomes `mmproj-gemma-3-4b-it-F16.gguf`).
 */
export function projectorFileName(repo: string, name: string): string {
  const rest = baseName(name)
    .replace(/\.gguf$/i, '')
    .replace(/[-_.]?mmproj[-_.]?/i, '-')
    .replace(/^-+|-+$/g, '');
  const stem = repo.replace(/[-_.]gguf$/i, '');
  const plain = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '');
  if (rest === '') return `mmproj-${stem}.gguf`;
  return plain(rest).startsWith(plain(stem)) ? `mmproj-${rest}.gguf` : `mmproj-${stem}-${rest}.gguf`;
}

/** GGUF models in the listing: projectors dropped, split parts folded into their first part. */
export function modelChoices(files: RepoFile[]): Choice[] {
  const byName = new Map(files.map((file) => [file.name, file]));
  const choices: Choice[] = [];
  for (const file of files) {
    if (!/\.gguf$/i.test(file.name) || isProjectorName(file.name)) continue;
    const shard = SHARD_PATTERN.exec(file.name);
    if (shard && Number(shard[1]) !== 1) continue;
    const parts = splitPartNames(file.name).map((name) => byName.get(name));
    if (parts.some((part) => part === undefined)) continue; // an incomplete split upload
    const sizes = parts.map((part) => part!.size);
    const size = sizes.every((item) => item !== null) ? sizes.reduce((sum, item) => sum! + item!, 0) : null;
    choices.push({ name: file.name, size });
  }
  return choices;
}

/** Bits per weight read from the file name, for ordering when the listing has no sizes. */
function nameBits(name: string): number {
  const lower = baseName(name).toLowerCase();
  const quant = /(?:^|[^a-z0-9])i?q(\d)/.exec(lower);
  if (quant) return Number(quant[1]);
  if (/(?:^|[^a-z0-9])b?f16(?:[^a-z0-9]|$)/.test(lower)) return 16;
  if (/(?:^|[^a-z0-9])f32(?:[^a-z0-9]|$)/.test(lower)) return 32;
  return 64;
}

function smallest(choices: Choice[]): Choice {
  return [...choices].sort((a, b) => {
    if (a.size !== null && b.size !== null && a.size !== b.size) return a.size - b.size;
    if (a.size === null || b.size === null) {
      const bits = nameBits(a.name) - nameBits(b.name);
      if (bits !== 0) return bits;
    }
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  })[0]!;
}

/** Does the base name contain the quant as a whole token (`Q4_K` does not match `Q4_K_M`)? */
function hasQuant(name: string, quant: string, whole: boolean): boolean {
  const lower = baseName(name).toLowerCase().replace(SHARD_PATTERN, '.gguf');
  const wanted = quant.toLowerCase();
  if (!whole) return lower.includes(wanted);
  const escaped = wanted.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?:^|[^a-z0-9_])${escaped}(?:[^a-z0-9_]|$)`).test(lower);
}

/**
 * The file to pull from a repository listing: with a quant, the file whose name contains
 * it (a whole-token match preferred); without, a Q4_K_M if any, else the smallest GGUF.
 */
export function pickRepoFile(files: RepoFile[], label: string, quant?: string): string {
  const choices = modelChoices(files);
  if (choices.length === 0) {
    throw new HearthError('model_not_found', `${label} has no .gguf model files.`, { param: 'spec' });
  }
  if (quant !== undefined) {
    const whole = choices.filter((choice) => hasQuant(choice.name, quant, true));
    const loose = whole.length > 0 ? whole : choices.filter((choice) => hasQuant(choice.name, quant, false));
    if (loose.length === 0) {
      const available = choices
        .map((choice) => baseName(choice.name))
        .slice(0, 20)
        .join(', ');
      throw new HearthError('model_not_found', `${label} has no .gguf file for "${quant}". Available: ${available}.`, {
        param: 'spec',
      });
    }
    return smallest(loose).name;
  }
  const preferred = choices.filter((choice) => hasQuant(choice.name, 'q4_k_m', false));
  return smallest(preferred.length > 0 ? preferred : choices).name;
}
