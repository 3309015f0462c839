/**
 * Models moving to the native llama-server build: once it is ready, a model moves to it when no
 * request runs on it (a request in flight finishes on the process it started on), restarted as a
 * reload restarts it, so its conversation's next turn evaluates only its new tokens (llama-server's
 * own counters); a model loaded later starts on it; a native binary that does not start leaves the
 * model on the quick build. The native build here is a copy of the quick build's binary. Needs the
 * llama-server build.
 */
import { chmodSync, copyFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { NativeBuildStatus } from '#shared/api/admin.js';
import type { Engine } from '../../../companion/src/inference/engine.js';
import { ServerBuild } from '../../../companion/src/inference/server/build-service.js';
import type { ServerModel } from '../../../companion/src/inference/server/model.js';
import type { NativeBinary } from '../../../companion/src/inference/server/native-service.js';
import type { GenerationRequest, HistoryItem, ModelFile } from '../../../companion/src/inference/types.js';
import { conversationTurn, engineMaker, serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest, tinyModelFile } from '../../helpers/models.js';
import { tempFolder } from '../../helpers/temp.js';
import { untilTrue } from '../../helpers/until.js';

let model: ModelFile;
let nativeCopy: string;
const makeEngine = engineMaker();

beforeAll(async () => {
  model = await tinyModelFile();
  const quick = new ServerBuild().ready();
  if (!quick) throw new Error('These tests need the llama-server build (the server-engine project builds it).');
  nativeCopy = join(tempFolder('native'), 'llama-server');
  copyFileSync(quick.binary, nativeCopy);
  chmodSync(nativeCopy, 0o755);
});

/** The native build as the engine sees it, made ready when the test says so. */
class StandIn implements NativeBinary {
  ready = false;
  private readonly listeners: ((binary: string) => void)[] = [];

  constructor(private readonly file: () => string = () => nativeCopy) {}

  binary(): string | undefined {
    return this.ready ? this.file() : undefined;
  }

  onReady(listener: (binary: string) => void): void {
    this.listeners.push(listener);
  }

  status(): NativeBuildStatus {
    return { setting: 'auto', build: this.ready ? { state: 'ready', built_at: new Date().toISOString(), build_seconds: 1 } : { state: 'absent' } };
  }

  retry(): NativeBuildStatus {
    return this.status();
  }

  finish(): void {
    this.ready = true;
    for (const listener of this.listeners) listener(this.file());
  }
}

const ask = (history: HistoryItem[]): GenerationRequest => generationRequest('tiny', { history, maxTokens: 8, sampling: { seed: 5, temperature: 0 } });
const turn = (subject: Engine, history: HistoryItem[], text: string) => conversationTurn(subject, model, history, text, ask);
const system: HistoryItem = { role: 'system', text: 'You are a careful assistant. '.repeat(30) };
const executable = (pid: number) => readlinkSync(`/proc/${pid}/exe`);

describe('the switch to the native llama-server build', () => {
  it('waits for the request in flight, then restarts the model on it; the next turn reads only its new tokens', async () => {
    const native = new StandIn();
    const engine = makeEngine(serverEngineOptions({ native, runDir: tempFolder('engine-run') }));
    await engine.load(model);
    const server = engine.loadedModel('tiny') as ServerModel;
    expect(engine.status()[0]).toMatchObject({ build: 'prebuilt' });
    const before = server.serverProcess.pid;
    expect(executable(before)).not.toBe(nativeCopy);

    // The native build becomes ready while the first turn generates (no conversation is saved yet,
    // so nothing would hold a restart back): that turn ends on the process it began on.
    const asked: HistoryItem[] = [system, { role: 'user', text: 'First question' }];
    const pids: number[] = [];
    const first = await engine.run(model, {
      ...ask(asked),
      maxTokens: 24,
      onText: () => {
        if (!native.ready) native.finish();
        pids.push(server.serverProcess.pid);
      },
    });
    expect(native.ready, 'the first turn wrote no text').toBe(true);
    expect(first.finishReason).not.toBe('cancelled');
    expect(new Set(pids)).toEqual(new Set([before]));

    await untilTrue(() => engine.status()[0]?.build === 'native', 'the model on the native build');
    const after = server.serverProcess.pid;
    expect(after).not.toBe(before);
    expect(executable(after)).toBe(nativeCopy);
    expect(engine.status()[0]?.process?.restarts).toBe(0);

    // Its conversation was saved before the restart: the next turn reads only its new tokens.
    const second = await turn(engine, [...asked, { role: 'assistant', text: first.text, toolCalls: [] }], 'Second question');
    expect(second.reused).toBeGreaterThanOrEqual(first.promptTokens);
    expect(second.evaluated).toBeLessThan(second.promptTokens - first.promptTokens + 12);
  });

  it('starts a model loaded after the build is ready on it, and one whose native binary does not start on the quick build', async () => {
    const native = new StandIn();
    native.finish();
    const engine = makeEngine(serverEngineOptions({ native, runDir: tempFolder('engine-run') }));
    const answer = await turn(engine, [system], 'A question');
    expect(answer.text.length).toBeGreaterThan(0);
    expect(engine.status()[0]).toMatchObject({ build: 'native' });
    expect(executable(engine.status()[0]!.process!.pid)).toBe(nativeCopy);

    // A binary built for another CPU would die at once: the model runs on the quick build.
    const broken = join(tempFolder('native-broken'), 'llama-server');
    writeFileSync(broken, '#!/bin/sh\necho "Illegal instruction" >&2\nexit 132\n');
    chmodSync(broken, 0o755);
    const refused = new StandIn(() => broken);
    refused.finish();
    const other = makeEngine(serverEngineOptions({ native: refused, runDir: tempFolder('engine-run') }));
    const fallback = await turn(other, [system], 'A question');
    expect(fallback.text.length).toBeGreaterThan(0);
    expect(other.status()[0]).toMatchObject({ build: 'prebuilt' });
    expect(executable(other.status()[0]!.process!.pid)).not.toBe(broken);
  });
});
