/**
 * A model's draft choices (its load settings in the app): GET /admin/models/{id}/drafts lists the
 * other installed generation models, each checked against the model's vocabulary: a compatible,
 * smaller one of its family is suggested, an incompatible one carries the reason, an embedding
 * model is not offered.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DraftCandidates } from '#shared/api/admin.js';
import { asOwner, sharedApp } from '../../helpers/app.js';
import { tinyEmbeddingModelPath } from '../../helpers/models.js';
import { draftPairDataDir } from '../../helpers/server.js';

const hearth = sharedApp({
  resetConfig: true,
  async prepare() {
    const dataDir = await draftPairDataDir();
    copyFileSync(await tinyEmbeddingModelPath(), join(dataDir, 'models', 'embed.gguf'));
    return { dataDir };
  },
});

async function drafts(id: string): Promise<DraftCandidates> {
  const response = await hearth.app.inject(asOwner({ method: 'GET', url: `/admin/models/${id}/drafts` }));
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as DraftCandidates;
}

describe('GET /admin/models/{id}/drafts', () => {
  it('suggests the smaller model of the same vocabulary first and gives the reason for the others', async () => {
    const answer = await drafts('target');
    expect(answer.draft).toBeNull();
    const ids = answer.candidates.map((candidate) => candidate.id);
    expect(ids).not.toContain('target');
    expect(ids).not.toContain('embed');
    expect(answer.candidates[0]).toMatchObject({ id: 'draft', suggested: true, same_family: true });
    expect(answer.candidates[0]!.problem).toBeUndefined();
    const thinking = answer.candidates.find((candidate) => candidate.id === 'thinking');
    expect(thinking?.suggested).toBe(false);
    expect(thinking?.problem).toMatch(/vocabulary has \d+ tokens|token \d+ differs|special token/);
    // Compatible ones come before the ones that are not.
    expect(ids.indexOf('thinking')).toBe(ids.length - 1);
  });

  it('names the draft configured now', async () => {
    const apply = await hearth.app.inject(
      asOwner({ method: 'POST', url: '/admin/config/apply', payload: { document: { version: 1, models: { overrides: { target: { draft: 'draft' } } } } } }),
    );
    expect(apply.statusCode, apply.body).toBe(200);
    expect((await drafts('target')).draft).toBe('draft');
  });

  it('does not offer a larger model as the suggestion', async () => {
    const answer = await drafts('draft');
    const target = answer.candidates.find((candidate) => candidate.id === 'target');
    expect(target).toMatchObject({ suggested: false });
    expect(target?.problem).toBeUndefined();
  });
});
