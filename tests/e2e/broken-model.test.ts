import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../helpers/models.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;

beforeAll(async () => {
  const dataDir = await newDataDir();
  const whole = readFileSync(await tinyModelPath());
  writeFileSync(join(dataDir, 'models', 'broken.gguf'), whole.subarray(0, Math.floor(whole.length / 2)));
  copyFileSync(await tinyModelPath(), join(dataDir, 'models', 'spare.gguf'));
  server = await startServer({ dataDir });
});

afterAll(async () => {
  await server.stop();
});

const chat = (model: string) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('a model that is listed but cannot load', () => {
  it('says why, keeps saying it in /v1/models, and leaves the server and other models working', async () => {
    const response = await chat('broken');
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error.code).toBe('model_load_failed');
    expect(body.error.param).toBe('model');
    expect(body.error.message).toMatch(/broken could not be loaded .* the file is incomplete \(\d+ bytes, its tensors need at least \d+\); download it again/);

    const list = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string; error?: string; loaded: boolean }[] };
    expect(list.data.find((model) => model.id === 'broken')?.error).toMatch(/incomplete/);
    expect((await chat('spare')).status).toBe(200);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
