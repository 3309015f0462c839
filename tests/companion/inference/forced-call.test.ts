import { describe, expect, it } from 'vitest';
import { readForcedCall } from '../../../companion/src/inference/forced-call.js';

describe('reading a forced tool call', () => {
  it('reads a complete call', () => {
    expect(readForcedCall('{"name": "get_weather", "arguments": {"city": "Paris"}}', ['get_weather'])).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      complete: true,
    });
  });

  it('keeps the partial arguments of a call cut short, never the wrapper', () => {
    expect(readForcedCall('{"name": "get_weather", "arguments": {"city": "Pa', ['get_weather'])).toEqual({
      name: 'get_weather',
      arguments: '{"city": "Pa',
      complete: false,
    });
    expect(readForcedCall('{"name": "get_weather", "arguments": {"city": "Paris"}', ['get_weather']).arguments).toBe('{"city": "Paris"}');
    expect(readForcedCall('{"name": "get_weather", "arguments": ', ['get_weather']).arguments).toBe('');
  });

  it('picks the tool a cut-off name was starting, or the first choice when nothing was written', () => {
    expect(readForcedCall('{"name": "get_t', ['get_weather', 'get_time'])).toEqual({ name: 'get_time', arguments: '', complete: false });
    expect(readForcedCall('', ['get_weather', 'get_time'])).toEqual({ name: 'get_weather', arguments: '', complete: false });
  });
});
