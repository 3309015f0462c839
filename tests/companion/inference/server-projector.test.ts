/**
 * The generated tiny projector in llama-server itself: the process loads it beside the tiny model
 * (`--mmproj`), says it takes images, and an image in a prompt costs the projector's tokens; a
 * projector made for another embedding size is refused by llama.cpp. The tiny sound projector
 * (Ultravox's type) loads as audio, and a WAV costs its tokens. Needs the llama-server build.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { serverBuildPaths, type ServerBuildPaths } from '../../../companion/src/inference/server/build.js';
import { ServerProcess } from '../../../companion/src/inference/server/process.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { projectorAudioTokens, projectorImageTokens, tinyProjectorBytes, writeTinyProjector } from '../../../scripts/gguf/write-projector.js';
import { tinyAudioModelPaths, tinyVisionModelPaths } from '../../helpers/models.js';
import { tinyWav } from '../../helpers/sounds.js';
import { tempFolder } from '../../helpers/temp.js';

const started: ServerProcess[] = [];

afterAll(async () => {
  for (const process of started) await process.stop();
});

function buildPaths(): ServerBuildPaths {
  const paths = serverBuildPaths();
  if ('unavailable' in paths) throw new Error(paths.unavailable);
  return paths;
}

async function start(model: string, projector: string): Promise<ServerProcess> {
  const process = await ServerProcess.start({
    paths: buildPaths(),
    gpu: false,
    args: ['--model', model, '--mmproj', projector, '--ctx-size', '512', '--parallel', '1', '--threads', '1'],
    runDir: tempFolder('engine-run'),
    log: silentLogger,
  });
  started.push(process);
  return process;
}

interface Completion {
  tokens_evaluated: number;
  content: string;
}

describe('the tiny projector in llama-server', () => {
  it('is small, and loads beside the tiny model as a vision projector with a media marker', async () => {
    const { model, projector } = await tinyVisionModelPaths();
    expect(statSync(projector).size).toBe(tinyProjectorBytes());
    expect(statSync(projector).size).toBeLessThan(200_000);
    const server = await start(model, projector);
    const props = await server.client.json<{ modalities?: { vision?: boolean; audio?: boolean }; media_marker?: string }>('GET', '/props');
    expect(props.modalities).toMatchObject({ vision: true, audio: false });
    expect(props.media_marker).toMatch(/\S{8,}/);

    const image = await sharp({ create: { width: 20, height: 12, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .png()
      .toBuffer();
    const text = '<|im_start|>user\nWhat is this?<|im_end|>\n<|im_start|>assistant\n';
    const withImage = text.replace('?', `? ${props.media_marker}`);
    const plain = await server.client.json<Completion>('POST', '/completion', { prompt: text.replace('?', '? '), n_predict: 2, cache_prompt: false });
    const seen = await server.client.json<Completion>('POST', '/completion', {
      prompt: { prompt_string: withImage, multimodal_data: [image.toString('base64')] },
      n_predict: 2,
      cache_prompt: false,
    });
    expect(seen.tokens_evaluated).toBe(plain.tokens_evaluated + projectorImageTokens);
    expect(seen.content.length).toBeGreaterThan(0);
  });

  it('with a sound encoder instead, loads as audio, and a WAV costs its tokens for each 30-second window', async () => {
    const { model, projector } = await tinyAudioModelPaths();
    expect(statSync(projector).size).toBe(tinyProjectorBytes({ vision: false, audio: true }));
    expect(statSync(projector).size).toBeLessThan(1_000_000);
    const server = await start(model, projector);
    const props = await server.client.json<{ modalities?: { vision?: boolean; audio?: boolean }; media_marker?: string }>('GET', '/props');
    expect(props.modalities).toMatchObject({ vision: false, audio: true });

    const text = '<|im_start|>user\nWhat is this?<|im_end|>\n<|im_start|>assistant\n';
    const plain = await server.client.json<Completion>('POST', '/completion', { prompt: text.replace('?', '? '), n_predict: 2, cache_prompt: false });
    const heard = (seconds: number) =>
      server.client.json<Completion>('POST', '/completion', {
        prompt: { prompt_string: text.replace('?', `? ${props.media_marker}`), multimodal_data: [tinyWav(seconds).toString('base64')] },
        n_predict: 2,
        cache_prompt: false,
      });
    const short = await heard(1);
    expect(short.tokens_evaluated).toBe(plain.tokens_evaluated + projectorAudioTokens);
    expect(short.content.length).toBeGreaterThan(0);
    expect((await heard(31)).tokens_evaluated).toBe(plain.tokens_evaluated + 2 * projectorAudioTokens);
  });

  it('made for another embedding size, is refused when the process starts', async () => {
    const { model } = await tinyVisionModelPaths();
    const wrong = join(tempFolder('wrong-projector'), 'mmproj-wrong.gguf');
    await writeTinyProjector(wrong, { embedding: 48 });
    await expect(start(model, wrong)).rejects.toThrow(/llama-server (exited|ended)/);
  });
});
