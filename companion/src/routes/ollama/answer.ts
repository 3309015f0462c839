import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OllamaMetrics } from '#shared/api/ollama.js';
import { HearthError } from '../../errors.js';
import type { Generator } from '../../generation/generate.js';
import { clientGone } from '../../http/sse.js';
import type { GenerationRequest, GenerationResult } from '../../inference/types.js';
import type { OllamaContext } from '../contexts.js';
import { openLines, type LineStream } from './lines.js';

/** How one route (chat or generate) writes its answer. */
export interface AnswerShape<Line> {
  /** A streamed line with a piece of the answer's text or of its thought. */
  piece(text: string, thinking: string): Line;
  /** Streamed lines between the text and the last line (chat's tool calls). */
  calls(result: GenerationResult): Line[];
  /** The last streamed line (`whole` false), or the whole answer as one object. */
  done(result: GenerationResult, metrics: OllamaMetrics, whole: boolean): Line;
}

export interface Job<Line> {
  generator: Generator;
  /** The request but its signal and callbacks, which are set here. */
  generation: Omit<GenerationRequest, 'signal' | 'onText' | 'onReasoning'>;
  stream: boolean;
  /** keep_alive 0: the local model is unloaded once the answer is complete. */
  unloadAfter: boolean;
  shape: AnswerShape<Line>;
}

/**
 * Runs a generation on the one generation path and answers in Ollama's way: NDJSON lines as the
 * text comes (the stream opens with the first piece, so a problem found before it is still a plain
 * HTTP error), or one object. An error after the stream opened is a last `{"error": ...}` line,
 * as Ollama sends it.
 */
export async function answer<Line>(
  context: Pick<OllamaContext, 'engine' | 'shutdown'>,
  request: FastifyRequest,
  reply: FastifyReply,
  job: Job<Line>,
): Promise<Line | undefined> {
  const { shape, stream } = job;
  const started = process.hrtime.bigint();
  let first: bigint | undefined;
  const signal = clientGone(request, reply, context.shutdown);
  let out: LineStream | undefined;
  const open = () => (out ??= openLines(reply));
  const piece = (text: string, thinking: string) => {
    first ??= process.hrtime.bigint();
    if (stream) open().line(shape.piece(text, thinking));
  };
  let result: GenerationResult;
  try {
    result = await job.generator.run({ ...job.generation, signal, onText: (delta) => piece(delta, ''), onReasoning: (delta) => piece('', delta) });
  } catch (error) {
    if (!out) throw error;
    out.line({ error: error instanceof HearthError ? error.message : new HearthError('internal_error').message });
    out.end();
    request.log.error({ err: error }, 'stream failed');
    return undefined;
  } finally {
    if (job.unloadAfter && job.generator.local) void context.engine.unload(job.generator.id).catch(() => undefined);
  }
  const ended = process.hrtime.bigint();
  const metrics = metricsOf(result, started, first ?? ended, ended);
  if (!stream) return signal.aborted ? undefined : shape.done(result, metrics, true);
  const lines = open();
  if (signal.aborted) {
    // The client left (no one reads this) or the server is shutting down: then say so before ending.
    if (context.shutdown.aborted) lines.line({ error: 'The server is shutting down; this reply was cut short.' });
    lines.end();
    return undefined;
  }
  for (const line of shape.calls(result)) lines.line(line);
  lines.line(shape.done(result, metrics, false));
  lines.end();
  return undefined;
}

/** Ollama's figures (nanoseconds): the prompt counts until the first piece, the answer after it; Hearth's loads are not told apart. */
function metricsOf(result: GenerationResult, started: bigint, first: bigint, ended: bigint): OllamaMetrics {
  return {
    total_duration: Number(ended - started),
    load_duration: 0,
    prompt_eval_count: result.promptTokens,
    prompt_eval_duration: Number(first - started),
    eval_count: result.completionTokens,
    eval_duration: Number(ended - first),
  };
}

export function doneReasonOf(result: GenerationResult): 'stop' | 'length' {
  return result.finishReason === 'length' ? 'length' : 'stop';
}
