/**
 * Images in agent runs, through the real engine and a real MCP service: an image in a run's
 * input, and the everything service's get-tiny-image tool (an MCP `image` block) reaching a
 * vision model as an image. `tiny` and `tiny-vision` are the same weights, one without and one
 * with the tiny projector beside it: on llama-server, by its own counts, the vision model's next
 * prompt is the conversation with the tool's image after its note (as a chat completions tool
 * message with that image costs); the model without vision reads the note alone and the run goes
 * on. A bad image in the input is a 400 naming it.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun } from '#shared/api/agents.js';
import { projectorImageTokens } from '../../../scripts/gguf/write-projector.js';
import { agentDataDir, waitFor } from '../../helpers/agents.js';
import { testApp } from '../../helpers/app.js';
import { EVERYTHING } from '../../helpers/mcp.js';
import { tinyVisionModelPaths } from '../../helpers/models.js';

const onServer = process.env.HEARTH_ENGINE === 'server';
let app: Awaited<ReturnType<typeof testApp>>;
let png = '';

beforeAll(async () => {
  const looking = { tools: [], max_tokens: 3, temperature: 0, memory: { enabled: false }, max_steps: 2 };
  const calling = { tools: ['everything_get-tiny-image'], tool_choice: 'required', max_tokens: 64, temperature: 0, memory: { enabled: false }, max_steps: 3 };
  const dataDir = await agentDataDir({
    withModel: true,
    agents: [
      { id: 'looker', model: 'tiny-vision', ...looking },
      { id: 'blind-looker', model: 'tiny', ...looking },
      { id: 'seer', model: 'tiny-vision', ...calling },
      { id: 'blind', model: 'tiny', ...calling },
    ],
    sections: {
      models: { threads: 1 },
      mcp_services: [{ name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] }],
    },
  });
  const { model, projector } = await tinyVisionModelPaths();
  mkdirSync(join(dataDir, 'models', 'vision'));
  copyFileSync(model, join(dataDir, 'models', 'vision', 'tiny-vision.gguf'));
  copyFileSync(projector, join(dataDir, 'models', 'vision', 'mmproj-tiny-vision.gguf'));
  app = await testApp({ dataDir });
  await waitFor(() => (app.services.mcp.catalog.get('everything_get-tiny-image') ? true : undefined), 30_000, 'the everything service');
  png = (
    await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 30, g: 140, b: 200 } } })
      .png()
      .toBuffer()
  ).toString('base64');
});

afterAll(async () => {
  await app?.close();
});

const run = async (agent: string, input: unknown) => {
  const response = await app.app.inject({ method: 'POST', url: `/agents/${agent}/run`, payload: { input } });
  return { status: response.statusCode, body: response.json() as AgentRun & { error: { message: string; param?: string } } };
};

const withImage = (url: string) => [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What does this show?' },
      { type: 'image_url', image_url: { url } },
    ],
  },
];

describe('an image in a run’s input', () => {
  it.runIf(onServer)('reaches a vision model: the prompt is the projector’s tokens longer', async () => {
    const plain = await run('looker', [{ role: 'user', content: [{ type: 'text', text: 'What does this show?' }] }]);
    const seen = await run('looker', withImage(`data:image/png;base64,${png}`));
    expect(plain.body.status).toBe('completed');
    expect(seen.body.status).toBe('completed');
    expect(seen.body.steps[0]!.usage.prompt_tokens).toBe(plain.body.steps[0]!.usage.prompt_tokens + projectorImageTokens);
    // The run keeps its input as it was sent.
    expect(JSON.stringify(seen.body.input)).toContain('image_url');
  });

  it('is refused for a model without vision, and a bad one is a 400 naming it', async () => {
    const blind = await run('blind-looker', withImage(`data:image/png;base64,${png}`));
    expect(blind.status).toBe(400);
    expect(blind.body.error.message).toMatch(/The agent's model tiny cannot take images/);
    const bad = await run('looker', withImage(`data:image/png;base64,${Buffer.from('no image').toString('base64')}`));
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('input[0].content[1].image_url.url');
    expect(bad.body.error.message).toMatch(/is not an image local models here can read/);
    const garbled = await run('looker', withImage('data:image/png;base64,@@@@'));
    expect(garbled.status).toBe(400);
    expect(garbled.body.error.message).toMatch(/input\[0\]\.content\[1\]\.image_url\.url is not base64/);
    const assistant = await run('looker', [{ role: 'assistant', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }]);
    expect(assistant.status).toBe(400);
    expect(assistant.body.error.message).toMatch(/images go in user messages/);
  });
});

describe('an MCP tool’s image', () => {
  it('reaches a model without vision as a note, and the run goes on', async () => {
    const { body } = await run('blind', 'Show me the picture.');
    expect(body.status).not.toBe('failed');
    const call = body.steps[0]!.tool_calls[0]!;
    expect(call).toMatchObject({ name: 'everything_get-tiny-image', is_error: false });
    expect(call.output).toMatch(/Here's the image you requested:\n\[image: image\/png, \d+ bytes\]\nThe image above is the MCP logo\./);
    expect(body.steps.length).toBeGreaterThanOrEqual(2);
  });

  it.runIf(onServer)('reaches a vision model as an image, right after its note, as a tool message’s image does', async () => {
    const blind = await run('blind', 'Show me the picture.');
    const seen = await run('seer', 'Show me the picture.');
    const call = seen.body.steps[0]!.tool_calls[0]!;
    const output = call.output!;
    expect(output).toBe(blind.body.steps[0]!.tool_calls[0]!.output);
    // The next model call's prompt, by llama-server's counts, is the same conversation sent as chat
    // completions: the note alone for the model without vision, the tool's own image after its note for the other.
    const entry = app.services.mcp.catalog.get('everything_get-tiny-image')!;
    const image = ((await import(join(dirname(EVERYTHING), 'tools', 'get-tiny-image.js'))) as { MCP_TINY_IMAGE: string }).MCP_TINY_IMAGE;
    const noted = output.indexOf(']') + 1;
    const chat = async (model: string, withImage: boolean) => {
      const content = withImage
        ? [
            { type: 'text', text: output.slice(0, noted) },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } },
            { type: 'text', text: output.slice(noted) },
          ]
        : output;
      const response = await app.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        payload: {
          model,
          max_tokens: 1,
          tools: [{ type: 'function', function: { name: entry.name, description: entry.description, parameters: entry.inputSchema } }],
          messages: [
            { role: 'user', content: 'Show me the picture.' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
            },
            { role: 'tool', tool_call_id: call.call_id, content },
          ],
        },
      });
      return (response.json() as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    };
    expect(blind.body.steps[1]!.usage.prompt_tokens).toBe(await chat('tiny', false));
    expect(seen.body.steps[1]!.usage.prompt_tokens).toBe(await chat('tiny-vision', true));
    expect(seen.body.steps[1]!.usage.prompt_tokens).toBeGreaterThan(blind.body.steps[1]!.usage.prompt_tokens);
  });

  it.runIf(!onServer)('on the in-process engine, a vision model’s run fails on the image with the reason', async () => {
    const { body } = await run('seer', 'Show me the picture.');
    expect(body.status).toBe('failed');
    expect(body.error).toMatchObject({
      code: 'invalid_request_error',
      message: expect.stringMatching(/takes images only on the llama-server engine/) as unknown,
    });
  });
});
