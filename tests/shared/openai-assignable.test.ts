import { describe, expect, it } from 'vitest';
import { here, problems, program } from './typescript.js';

/*
 * Compiles openai-assignable.ts (the shared wire types put where the official `openai` package's
 * types are expected) and expects tsc to find nothing; a mismatched shape in memory proves the
 * check can fail.
 */

const CHECKS = here('openai-assignable.ts');
const BROKEN = here('openai-assignable.broken.ts');

describe('the shared wire types against the openai package', () => {
  const built = program([CHECKS], {
    [BROKEN]: `import type OpenAI from 'openai';
type Assignable<A extends B, B> = [A, B];
export type Wrong = Assignable<{ id: string; object: 'chat.completion'; created: number; model: string; choices: { index: number; finish_reason: 'done' }[] }, OpenAI.Chat.ChatCompletion>;
`,
  });

  it('are assignable to the SDK types (models, chat completions, Responses objects, events and input items, embeddings)', () => {
    expect(problems(built, CHECKS)).toEqual([]);
  });

  it('a shape the SDK does not accept is reported', () => {
    expect(problems(built, BROKEN).join('\n')).toMatch(/does not satisfy the constraint 'ChatCompletion'/);
  });
});
