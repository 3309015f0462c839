import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Artifact } from '@a2a-js/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { ArtifactFolder } from '../../../companion/src/cloud/artifacts.js';

const root = mkdtempSync(join(tmpdir(), 'hearth-test-artifacts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const artifact = (artifactId: string, name: string, mediaType: string, value: string): Artifact => ({
  artifactId,
  name,
  description: '',
  metadata: undefined,
  extensions: [],
  parts: [{ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType }],
});

describe('ArtifactFolder', () => {
  it("keeps a peer's media type only as a plain type/subtype, since it is sent back as a response header", () => {
    const folder = new ArtifactFolder(root, 'run_media');
    expect(folder.write(artifact('a', 'notes.md', 'Text/Markdown', '# hi'), false).media_type).toBe('text/markdown');
    expect(folder.write(artifact('b', 'page', 'text/html\r\nSet-Cookie: x=1', '<p>'), false).media_type).toBe('application/octet-stream');
    expect(folder.write(artifact('c', 'plain', 'text/plain; charset=utf-8', 'x'), false).media_type).toBe('text/plain');
  });

  it('writes safe, unique file names inside the run folder and appends chunks', () => {
    const folder = new ArtifactFolder(root, 'run_names');
    const first = folder.write(artifact('a', '../../escape me', 'text/plain', 'one '), false);
    folder.write(artifact('a', '../../escape me', 'text/plain', 'two'), true);
    const second = folder.write(artifact('b', '../../escape me', 'text/plain', 'other'), false);
    expect(first.path).toBe('run_names/escape_me');
    expect(second.path).toBe('run_names/2-escape_me');
    expect(readFileSync(join(root, first.path), 'utf8')).toBe('one two');
  });
});
