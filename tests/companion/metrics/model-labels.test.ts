import { describe, expect, it } from 'vitest';
import { Metrics, type MetricSources } from '../../../companion/src/metrics/metrics.js';
import { parsePrometheus, sampleValue } from '../../helpers/prometheus.js';

/*
 * Which model ids become metric labels (issue 31, item 12): a provider answering 200 for any model
 * name must not put that name (a user's note, a prompt) into the metrics. A provider model is a
 * label only when the provider lists it or the configuration names it; local models have room of
 * their own, so a provider listing hundreds of models leaves them their labels.
 */

const LISTED = Array.from({ length: 150 }, (_, index) => `router/model-${index}`);

function metrics(): Metrics {
  const sources: MetricSources = {
    engine: () => ({ status: () => [], memoryBudgetBytes: 0 }),
    pools: () => [],
    stored: () => ({ agentRuns: {}, imageJobs: {}, mediaJobs: {} }),
    localModels: () => ['tiny'],
    providerModel: (id) => (id.startsWith('router/') ? LISTED.includes(id) : undefined),
  };
  return new Metrics(sources);
}

const request = (model: string, status = 200) => ({
  family: 'inference' as const,
  model,
  status,
  seconds: 0.1,
  code: status < 400 ? undefined : 'provider_error',
});

describe('model labels', () => {
  it('never take a provider model name the provider only answered for', async () => {
    const target = metrics();
    const note = 'router/remember to call Dana about the biopsy';
    target.observeRequest(request(note));
    target.usage(note, 5, 7);
    target.firstChunk(note, 0.2);
    target.interrupted(note);
    const text = await target.render();
    expect(text).not.toContain('Dana');
    const families = parsePrometheus(text);
    expect(sampleValue(families, 'hearth_requests_total', { family: 'inference', model: 'other', status: '200' })).toBe(1);
    expect(sampleValue(families, 'hearth_provider_interruptions_total', { model: 'other' })).toBe(1);
  });

  it('take listed provider models, and leave local models room however many a provider lists', async () => {
    const target = metrics();
    for (const id of LISTED) target.observeRequest(request(id));
    target.observeRequest(request('tiny'));
    target.observeRequest(request('an-alias-hearth-served'));
    const families = parsePrometheus(await target.render());
    const count = (model: string) => sampleValue(families, 'hearth_requests_total', { family: 'inference', model, status: '200' });
    expect(count('router/model-0')).toBe(1);
    expect(count('tiny')).toBe(1);
    expect(count('an-alias-hearth-served')).toBe(1);
    // Past the provider models' own room (100), further ones are `other`.
    expect(count('router/model-149')).toBeUndefined();
    expect(count('other')).toBe(50);
  });
});
