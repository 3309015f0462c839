/**
 * Settings that become timers: Node fires a setTimeout of 2^31 ms or more at once (about 24.8
 * days), so `idle_unload_seconds: 3000000` unloaded a model after every request. Each such
 * setting has a maximum under that, and a larger value is refused with words that say the range.
 */
import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { configSchema } from '../../../companion/src/config/schema.js';
import { MEMORY_RANGES } from '../../../companion/src/memory/settings.js';

/** Node's largest timer delay. */
const TIMER_LIMIT_MS = 2 ** 31 - 1;

const UNITS_MS: Record<string, number> = { ms: 1, seconds: 1000, minutes: 60_000, hours: 3_600_000 };

type Schema = Record<string, unknown>;

/** Every setting named for a duration (…_ms, …_seconds, …_minutes, …_hours), with its schema and path. */
function durations(schema: Schema, path: string): [string, Schema, number][] {
  const found: [string, Schema, number][] = [];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  for (const [name, child] of Object.entries(properties)) {
    const unit = /_(ms|seconds|minutes|hours)$/.exec(name)?.[1];
    if (unit) found.push([`${path}${name}`, child, UNITS_MS[unit]!]);
    found.push(...durations(child, `${path}${name}.`));
  }
  if (schema.items && typeof schema.items === 'object') found.push(...durations(schema.items as Schema, `${path.slice(0, -1)}[].`));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    found.push(...durations(schema.additionalProperties as Schema, `${path}*.`));
  return found;
}

describe('settings that become timers', () => {
  it('each has a maximum under 2^31 ms (or is clamped into one when read)', () => {
    const all = durations(configSchema as unknown as Schema, '');
    expect(all.map(([path]) => path)).toEqual(expect.arrayContaining(['models.idle_unload_seconds', 'providers[].timeout_ms', 'media_providers[].timeout_ms']));
    for (const [path, schema, unit] of all) {
      const clamped = MEMORY_RANGES[path.replace(/^memory\./, '') as keyof typeof MEMORY_RANGES];
      const maximum = path.startsWith('memory.') && clamped ? clamped.maximum : schema.maximum;
      expect(typeof maximum, `${path} has no maximum`).toBe('number');
      expect((maximum as number) * unit, path).toBeLessThanOrEqual(TIMER_LIMIT_MS);
    }
  });

  it('refuses idle_unload_seconds: 3000000 and provider timeouts past a day, saying the range', () => {
    const { problems } = checkDocument({
      version: 1,
      models: { idle_unload_seconds: 3000000 },
      providers: [{ name: 'slow', base_url: 'http://127.0.0.1:9/v1', timeout_ms: 3000000000 }],
      media_providers: [{ name: 'video', base_url: 'http://127.0.0.1:9/v1', timeout_ms: 2 ** 31, models: [{ id: 'v', usd_per_second: 0 }] }],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'models.idle_unload_seconds: must be a whole number from 0 to 604800',
        'providers[0].timeout_ms: must be a whole number from 1000 to 86400000',
        'media_providers[0].timeout_ms: must be a whole number from 1000 to 86400000',
      ]),
    );
  });

  it('keeps a week of idle time and a day of provider time', () => {
    const { problems } = checkDocument({
      version: 1,
      models: { idle_unload_seconds: 604800 },
      providers: [{ name: 'slow', base_url: 'http://127.0.0.1:9/v1', timeout_ms: 86400000 }],
    });
    expect(problems).toEqual([]);
  });
});
