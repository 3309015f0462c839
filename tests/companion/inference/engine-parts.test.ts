/** The llama-server engine's pieces that need no process: engine choice, output filtering, grammar composition, threads, admission. */
import { describe, expect, it } from 'vitest';
import { chooseEngine } from '../../../companion/src/inference/engine-choice.js';
import { embedJsonGrammar, literal } from '../../../companion/src/inference/server/gbnf.js';
import { OutputFilter, withoutHidden, type HiddenSpan } from '../../../companion/src/inference/server/output-filter.js';
import { SlotQueue } from '../../../companion/src/inference/server/slot-queue.js';
import { type HearthError } from '../../../companion/src/errors.js';

describe('which engine runs a model', () => {
  const building = { state: 'building' as const, progress: 0.25, step: 'configuring', started_at: '2026-11-26T10:00:00Z' };
  const ready = { state: 'ready' as const, built_at: '2026-11-26T10:00:00Z', build_seconds: 100 };

  it('is llama-server once built, unless pinned in process', () => {
    expect(chooseEngine('auto', ready, 'm')).toMatchObject({ engine: 'server', reason: expect.stringMatching(/own process/) });
    expect(chooseEngine('server', ready, 'm')).toMatchObject({ engine: 'server', reason: expect.stringMatching(/setting asks for the llama-server/) });
    expect(chooseEngine('in-process', ready, 'm')).toMatchObject({ engine: 'in-process', reason: expect.stringMatching(/setting asks for the in-process/) });
  });

  it('is in process with the reason on auto, and refused when pinned to the server', () => {
    expect(chooseEngine('auto', building, 'm')).toEqual({
      engine: 'in-process',
      reason: 'llama-server is being built (25 %, configuring); the in-process engine runs models meanwhile.',
    });
    expect(chooseEngine('auto', { state: 'absent' }, 'm')).toMatchObject({
      reason: expect.stringMatching(/not built yet \(its build starts in the background\)/),
    });
    const busy = chooseEngine('server', building, 'm') as { refused: HearthError };
    expect(busy.refused.code).toBe('server_busy');
    expect(busy.refused.retryAfter).toBe(30);
    const failed = chooseEngine('server', { state: 'failed', reason: 'the llama-server build failed: boom', failed_at: 'x' }, 'm') as { refused: HearthError };
    expect(failed.refused.code).toBe('model_load_failed');
    expect(failed.refused.message).toBe('m cannot run on the llama-server engine: the llama-server build failed: boom.');
  });
});

describe("what of the server's output a client sees", () => {
  const run = (triggers: string[], chunks: string[], hidden: HiddenSpan[] = [{ open: '<think>', close: '</think>' }]) => {
    const seen: string[] = [];
    const filter = new OutputFilter(triggers, hidden, (text) => seen.push(text));
    const afterEach: string[] = [];
    for (const chunk of chunks) {
      filter.push(chunk);
      afterEach.push(seen.join(''));
    }
    filter.finish();
    return { seen: seen.join(''), afterEach, calling: filter.calling };
  };

  it('holds back what may start a tool call, and nothing of the call once it starts', () => {
    const result = run(['||call:'], ['Let me check', ' ||', 'ca', 'll: get_weather({"city":', ' "Rome"})']);
    expect(result.afterEach.slice(0, 3)).toEqual(['Let me check', 'Let me check ', 'Let me check ']);
    expect(result.seen).toBe('Let me check ');
    expect(result.calling).toBe(true);
  });

  it('lets held-back text through when it turns out not to be a call', () => {
    expect(run(['||call:'], ['a |', '| b ||c'])).toMatchObject({ seen: 'a || b ||c', calling: false });
  });

  it('hides thoughts, including a span the template opened', () => {
    expect(run([], ['Hi <thi', 'nk>secret</th', 'ink> there']).seen).toBe('Hi  there');
    expect(run([], ['secret</think>Answer'], [{ open: '', close: '</think>', openAtStart: true }]).seen).toBe('Answer');
    expect(withoutHidden('a<think>b</think>c<think>unfinished', [{ open: '<think>', close: '</think>' }])).toBe('ac');
  });
});

describe('composing grammars', () => {
  it("embeds node-llama-cpp's JSON grammar under a prefix, without its end-of-value newlines", () => {
    const grammar = 'root ::= "{" rule0 "}" "\\n\\n\\n\\n" [\\n]*\nrule0 ::= "\\"a\\"" | val0\nval0 ::= [a-z]+ "rule0"';
    expect(embedJsonGrammar(grammar, 't0-')).toBe('t0-root ::= "{" t0-rule0 "}"\nt0-rule0 ::= "\\"a\\"" | t0-val0\nt0-val0 ::= [a-z]+ "rule0"');
    expect(literal('say "hi"\n')).toBe('"say \\"hi\\"\\n"');
  });
});

describe("admission to a model's slots", () => {
  it('runs as many requests as there are slots, queues a bounded number, and refuses the rest with a wait', async () => {
    const queue = new SlotQueue(1, 1, () => 7);
    const signal = new AbortController().signal;
    await queue.acquire(signal);
    const waiting = queue.acquire(signal);
    expect(queue.queued).toBe(1);
    const refused = (() => {
      try {
        void queue.acquire(signal);
      } catch (error) {
        return error;
      }
    })() as HearthError;
    expect(refused.code).toBe('rate_limit_exceeded');
    expect(refused.retryAfter).toBe(7);
    queue.release();
    await waiting;
    expect(queue.busy).toBe(1);
    queue.release();
    expect(queue.busy).toBe(0);
  });
});
