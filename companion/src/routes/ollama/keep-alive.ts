import type { OllamaKeepAlive } from '#shared/api/ollama.js';
import { HearthError } from '../../errors.js';

/** A Go duration as Ollama takes it ("5m", "1h30m", "-1s", "0"), or a number of seconds. */
const DURATION = /^-?(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$|^-?\d+(?:\.\d+)?$/;

/**
 * What `keep_alive` asks of the model after the reply: `unload` (0: unload it at once) or `keep`
 * (any other duration, or left out). Hearth keeps a model until its idle unload
 * (models.idle_unload_seconds after its last request) whatever duration is asked: the engine has
 * one idle time for every model, so a duration neither lengthens nor shortens it.
 */
export function keepAliveOf(value: OllamaKeepAlive | undefined): 'unload' | 'keep' {
  if (value === undefined) return 'keep';
  const text = String(value).trim();
  if (!DURATION.test(text))
    throw new HearthError('invalid_request_error', `keep_alive "${text}" is not a duration: send seconds (300) or a duration such as "5m" or "1h".`, {
      param: 'keep_alive',
    });
  // Zero, however it is written ("0", "0s", "0m0s"): every number in it is 0.
  return (text.match(/\d+(?:\.\d+)?/g) ?? []).every((number) => Number(number) === 0) ? 'unload' : 'keep';
}
