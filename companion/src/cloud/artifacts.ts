import { appendFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Artifact, Part } from '@a2a-js/sdk';
import type { RunArtifact } from '#shared/api/agents.js';

/** An artifact of a cloud task as kept in the data folder. */
export type StoredArtifact = RunArtifact;

/**
 * Writes the artifacts of cloud tasks under `<data-dir>/artifacts/<run_id>/`, one file per
 * artifact: text parts as text, raw parts as their bytes, data parts as JSON, URL parts as the
 * URL (never fetched). Chunks that append are appended. Files are 0600.
 */
export class ArtifactFolder {
  private readonly files = new Map<string, StoredArtifact>();

  constructor(
    private readonly root: string,
    private readonly runId: string,
  ) {}

  /** Stores one artifact update; returns the artifact as stored so far. */
  write(artifact: Artifact, append: boolean): StoredArtifact {
    const folder = join(this.root, this.runId);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const known = this.files.get(artifact.artifactId);
    const file = known?.path.slice(this.runId.length + 1) ?? this.fileName(artifact);
    const content = Buffer.concat(artifact.parts.map(partBytes));
    const target = join(folder, file);
    if (append && known) appendFileSync(target, content);
    else writeFileSync(target, content, { mode: 0o600 });
    const stored: StoredArtifact = {
      artifact_id: artifact.artifactId,
      name: artifact.name || artifact.artifactId,
      path: `${this.runId}/${file}`,
      media_type: plainMediaType(artifact.parts.find((part) => part.mediaType)?.mediaType) ?? known?.media_type ?? 'application/octet-stream',
      size_bytes: statSync(target).size,
    };
    this.files.set(artifact.artifactId, stored);
    return stored;
  }

  list(): StoredArtifact[] {
    return [...this.files.values()];
  }

  /** A safe, unique file name from the artifact's name (or a part's filename). */
  private fileName(artifact: Artifact): string {
    const wanted = artifact.parts.find((part) => part.filename)?.filename || artifact.name || artifact.artifactId;
    const base =
      wanted
        .replace(/[^A-Za-z0-9._-]+/g, '_')
        .replace(/^[._]+/, '')
        .slice(0, 100) || 'artifact';
    const taken = new Set([...this.files.values()].map((entry) => entry.path));
    let name = base;
    for (let n = 2; taken.has(`${this.runId}/${name}`); n++) name = `${n}-${base}`;
    return name;
  }
}

/** A peer's media type as a plain `type/subtype` (parameters dropped), or nothing: it becomes a response header. */
export function plainMediaType(value: string | undefined): string | undefined {
  const essence = value?.split(';')[0]!.trim();
  return essence && /^[A-Za-z0-9!#$&^_.+-]{1,64}\/[A-Za-z0-9!#$&^_.+-]{1,64}$/.test(essence) ? essence.toLowerCase() : undefined;
}

/** The text of an artifact's text parts (what a reader sees streaming). */
export function artifactText(artifact: Artifact): string {
  return artifact.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

function partBytes(part: Part): Buffer {
  const content = part.content;
  if (!content) return Buffer.alloc(0);
  if (content.$case === 'text') return Buffer.from(content.value, 'utf8');
  // Bytes arrive decoded; a peer that left them base64 in JSON is read as such.
  if (content.$case === 'raw') return typeof content.value === 'string' ? Buffer.from(content.value, 'base64') : Buffer.from(content.value);
  if (content.$case === 'url') return Buffer.from(`${content.value}\n`, 'utf8');
  return Buffer.from(JSON.stringify(content.value ?? null), 'utf8');
}
