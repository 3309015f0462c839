/**
 * Tool calls the model makes on its own (tool_choice auto) on the llama-server engine: the grammar
 * waits for the chat format's call trigger (a lazy grammar), then holds the call to the offered
 * tools and their parameters; the client never sees the call's text. The tiny model's random
 * weights never write ChatML's `||call:` by themselves, so the real request path runs here with a
 * call syntax whose trigger is a word the tiny model writes within a few tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveChatWrapper, type LlamaModel } from 'node-llama-cpp';
import { GrammarCache } from '../../../companion/src/inference/grammar-cache.js';
import { ServerBuild } from '../../../companion/src/inference/server/build-service.js';
import type { ServerClient } from '../../../companion/src/inference/server/client.js';
import { generateOnServer, type ServerRuntime } from '../../../companion/src/inference/server/generate.js';
import { ServerProcess } from '../../../companion/src/inference/server/process.js';
import { callSyntax, parseCalls, type CallSyntax } from '../../../companion/src/inference/server/tool-syntax.js';
import type { GenerationRequest } from '../../../companion/src/inference/types.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { loadLlama } from '../../../companion/src/inference/llama.js';
import { tinyModelPath } from '../../helpers/models.js';
import { tempFolder } from '../../helpers/temp.js';

let server: ServerProcess;
let client: ServerClient;
let vocab: LlamaModel;
let runtime: ServerRuntime;

beforeAll(async () => {
  const path = await tinyModelPath();
  const paths = new ServerBuild().ready();
  if (!paths) throw new Error('The llama-server build is not ready (the server-engine project builds it first).');
  server = await ServerProcess.start({
    paths,
    gpu: false,
    args: ['-m', path, '-c', '2048', '-np', '1', '-t', '1', '-ngl', '0', '--fit', 'off'],
    runDir: tempFolder('run'),
    log: silentLogger,
  });
  client = server.client;
  const llama = await loadLlama('cpu');
  vocab = await llama.loadModel({ modelPath: path, vocabOnly: true });
  const wrapper = resolveChatWrapper(vocab);
  const chatml = callSyntax(wrapper) as CallSyntax;
  // ChatML's syntax (`||call: name(params)`), with a trigger the tiny model writes early with this seed: " had".
  // The space belongs to it: the tiny tokenizer turns a bare "had" into the token " had", and llama.cpp
  // takes a one-token trigger as that token, whose piece (with the space) the grammar would refuse.
  const syntax: CallSyntax = { ...chatml, triggers: [' had'], opening: ' had ', prefix: ' had ' };
  runtime = { llama, model: vocab, wrapper, contextSize: 2048, grammars: new GrammarCache(llama), syntax, hidden: [] };
});

afterAll(async () => {
  await server?.stop();
  await vocab?.dispose();
});

const request = (onText: (text: string) => void, maxTokens = 200): GenerationRequest => ({
  model: 'tiny',
  history: [{ role: 'user', text: 'Hello there' }],
  maxTokens,
  sampling: { seed: 3, temperature: 0.8 },
  stop: [],
  tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { enum: ['Paris', 'Rome'] } }, required: ['city'] } }, { name: 'get_time' }],
  toolMode: { type: 'auto' },
  output: { type: 'text' },
  signal: new AbortController().signal,
  onText,
});

describe('a lazy tool-call grammar on llama-server', () => {
  it('lets text through until the trigger, then holds the call to an offered tool and its parameters', async () => {
    let streamed = '';
    const result = await generateOnServer(
      runtime,
      client,
      request((text) => (streamed += text)),
    );
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toHaveLength(1);
    const call = result.toolCalls[0]!;
    expect(['get_weather', 'get_time']).toContain(call.name);
    if (call.name === 'get_weather') expect(['Paris', 'Rome']).toContain((JSON.parse(call.arguments) as { city: string }).city);
    else expect(JSON.parse(call.arguments)).toEqual({});
    // The client saw the text before the call, and nothing of the call itself.
    expect(streamed).toBe(result.text);
    expect(streamed).not.toContain('had');
  });

  it('reads the calls back the way the grammar wrote them', () => {
    const syntax = callSyntax(runtime.wrapper) as CallSyntax;
    const parsed = parseCalls('Let me look. ||call: get_weather({"city": "Rome"})', syntax, ['get_weather', 'get_time']);
    expect(parsed).toEqual({ text: 'Let me look. ', calls: [{ name: 'get_weather', params: { city: 'Rome' } }], complete: true });
    expect(parseCalls('||call:get_time()', syntax, ['get_weather', 'get_time']).calls).toEqual([{ name: 'get_time', params: undefined }]);
    expect(parseCalls('||call: get_weather({"city": "Ro', syntax, ['get_weather']).complete).toBe(false);
  });
});
