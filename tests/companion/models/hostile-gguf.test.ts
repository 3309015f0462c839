/**
 * A crafted GGUF in a models folder (a 60-byte file claiming an array of 2^40 elements) once
 * made every start of Hearth end in a V8 abort: its header was read on the main thread by a
 * reader that trusts counts. Now it is one model listed with an error, and headers are read on
 * a thread whose failures end only that thread.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelList } from '#shared/api/openai.js';
import { GgufThread } from '../../../companion/src/models/gguf-thread.js';
import { testApp } from '../../helpers/app.js';
import { ggufArrayBomb } from '../../helpers/gguf-header.js';
import { newDataDir } from '../../helpers/server.js';

const STAND_IN = new URL('../../fixtures/gguf-thread/stand-in.mjs', import.meta.url);

describe('a hostile GGUF in the models folder', () => {
  it('is listed as an error with its reason while the server answers and the other models work', async () => {
    const dataDir = await newDataDir(true);
    await writeFile(join(dataDir, 'models', 'bomb.gguf'), ggufArrayBomb());
    const target = await testApp({ dataDir });
    try {
      const models = await target.app.inject({ method: 'GET', url: '/v1/models' });
      expect(models.statusCode).toBe(200);
      const listed = new Map((models.json() as ModelList).data.map((model) => [model.id, model]));
      expect(listed.get('bomb')).toMatchObject({
        capabilities: [],
        error: 'cannot read GGUF metadata: it says it has 1099511627776 elements in "a"; Hearth reads at most 16777216',
      });
      expect(listed.get('tiny')).toMatchObject({ capabilities: ['chat', 'completion', 'tools'] });
      expect(listed.get('tiny')!.error).toBeUndefined();
      expect((await target.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);

      const chat = await target.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        payload: { model: 'bomb', messages: [{ role: 'user', content: 'Hi' }] },
      });
      expect(chat.json()).toMatchObject({
        error: { code: 'model_load_failed', message: expect.stringContaining('bomb cannot be used: cannot read GGUF metadata') },
      });
    } finally {
      await target.close();
    }
  });
});

describe('the GGUF header thread', () => {
  it('fails only the read during which the thread ran out of memory; the next read gets a fresh thread', async () => {
    const thread = new GgufThread({ entry: STAND_IN, heapMb: 32 });
    try {
      const [hog, after] = [thread.read('/models/hog.oom'), thread.read('/models/after.gguf')];
      await expect(hog).rejects.toThrow('reading its header needed more than the 32 MiB of memory allowed');
      await expect(after).resolves.toEqual({ 'general.architecture': 'stand-in', 'general.name': '/models/after.gguf' });
    } finally {
      await thread.close();
    }
  });

  it('fails a read that passes the deadline', async () => {
    const thread = new GgufThread({ entry: STAND_IN, deadlineMs: 300 });
    try {
      await expect(thread.read('/models/stuck.hang')).rejects.toThrow('reading its header took longer than 0.3 s');
    } finally {
      await thread.close();
    }
  });
});
