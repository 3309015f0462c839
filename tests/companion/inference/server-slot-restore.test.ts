/**
 * Conversations that survive a restart of the llama-server engine: the slots' states are saved
 * when the engine closes and restored when a conversation's next turn arrives, so that turn
 * evaluates only its new tokens (llama-server's own prompt counters); a save file that does not
 * load is deleted and the turn reads its history again. Needs the llama-server build.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../companion/src/inference/engine.js';
import type { ServerModel } from '../../../companion/src/inference/server/model.js';
import type { GenerationRequest, HistoryItem, ModelFile } from '../../../companion/src/inference/types.js';
import { generationRequest, tinyModelFile } from '../../helpers/models.js';
import { conversationTurn, engineMaker, serverEngineOptions } from '../../helpers/engine.js';
import { tempFolder } from '../../helpers/temp.js';
import { untilTrue } from '../../helpers/until.js';

let model: ModelFile;
const makeEngine = engineMaker();
const engine = (runDir: string, parallel = 1) => makeEngine(serverEngineOptions({ parallel, runDir }));

beforeAll(async () => {
  model = await tinyModelFile();
});

const ask = (history: HistoryItem[]): GenerationRequest => generationRequest('tiny', { history, maxTokens: 8, sampling: { seed: 5, temperature: 0 } });
const turn = (subject: Engine, history: HistoryItem[], text: string) => conversationTurn(subject, model, history, text, ask);

const system: HistoryItem = { role: 'system', text: 'You are a careful assistant. '.repeat(30) };

/** The model's slot folder under a run folder, and the save files in it. */
function saved(runDir: string) {
  const root = join(runDir, 'slots');
  const [name] = readdirSync(root);
  const folder = join(root, name!);
  const files = readdirSync(folder).filter((file) => file.endsWith('.bin'));
  return { folder, files, index: JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as { file: string; tokens: number[] }[] };
}

describe('conversations across restarts of the llama-server engine', () => {
  it('restores a conversation after the engine stops and starts: the next turn reads only its new tokens', async () => {
    const runDir = tempFolder('engine-run');
    const first = engine(runDir);
    const a = await turn(first, [system], 'First question');
    expect(a.evaluated).toBe(a.promptTokens);
    await first.close();

    const { folder, files, index } = saved(runDir);
    expect(files).toHaveLength(1);
    expect(index[0]!.tokens.length).toBeGreaterThanOrEqual(a.promptTokens);
    // Only the companion's user reads them.
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    for (const file of [...files, 'index.json']) expect(statSync(join(folder, file)).mode & 0o777).toBe(0o600);

    const second = engine(runDir);
    const b = await turn(second, a.history, 'Second question');
    expect(b.reused).toBeGreaterThanOrEqual(a.promptTokens);
    expect(b.evaluated).toBeLessThan(b.promptTokens - a.promptTokens + 12);
    // The same conversation without a saved state reads its whole history (the measure above can fail).
    const fresh = engine(tempFolder('engine-run'));
    const cold = await turn(fresh, a.history, 'Second question');
    expect(cold.evaluated).toBe(cold.promptTokens);
  });

  // A new context size (or threads) keeps it; a new number of sequences does not: llama.cpp's state
  // file does not load into a KV cache split another way (the turn re-reads its history then).
  it('keeps a conversation across a reload of the model for a new context size', async () => {
    const runDir = tempFolder('engine-run');
    const subject = engine(runDir);
    const a = await turn(subject, [system], 'Before the reload');
    const { log: _log, build: _build, runDir: _runDir, ...next } = serverEngineOptions({ parallel: 1, contextSize: 1536 });
    subject.configure(next);
    await subject.unload('tiny');
    const b = await turn(subject, a.history, 'After the reload');
    expect(subject.status()[0]).toMatchObject({ sequences: 1, contextSize: 1536 });
    expect(b.reused).toBeGreaterThanOrEqual(a.promptTokens);
    expect(b.evaluated).toBeLessThan(b.promptTokens - a.promptTokens + 12);
  });

  it('saves a conversation once the model is idle, so a crash of the process keeps it', async () => {
    const subject = engine(tempFolder('engine-run'));
    const a = await turn(subject, [system], 'Before the crash');
    const server = subject.loadedModel('tiny') as ServerModel;
    await untilTrue(() => server.store.saved.length === 1, 'the idle save');
    const pid = server.serverProcess.pid;
    server.serverProcess.kill();
    await untilTrue(() => server.serverProcess.pid !== pid && server.serverProcess.running, 'the restart');
    const b = await turn(subject, a.history, 'After the crash');
    expect(b.reused).toBeGreaterThanOrEqual(a.promptTokens);
    expect(b.evaluated).toBeLessThan(b.promptTokens - a.promptTokens + 12);
  });

  it('deletes a save file that does not load, and the turn still answers', async () => {
    const runDir = tempFolder('engine-run');
    const first = engine(runDir);
    const a = await turn(first, [system], 'A question');
    await first.close();
    const { folder, files } = saved(runDir);
    writeFileSync(join(folder, files[0]!), Buffer.from('not a llama.cpp state file'.repeat(20)));

    const second = engine(runDir);
    const b = await turn(second, a.history, 'Another question');
    expect(b.text.length).toBeGreaterThan(0);
    expect(b.evaluated).toBe(b.promptTokens);
    expect(readdirSync(folder)).not.toContain(files[0]);
    const server = second.loadedModel('tiny') as ServerModel;
    expect(server.store.saved.find((entry) => entry.file === files[0])).toBeUndefined();
  });
});
