import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { planChange, type PlanContext } from '../../../companion/src/config/plan.js';
import type { ConfigDocument } from '#shared/api/config.js';

/*
 * Requiring access keys with none to use would lock every program out, the app included: the plan
 * refuses to turn the requirement on until a key exists, and says so in words.
 */

function documentWith(server: Record<string, unknown>): ConfigDocument {
  const { document, problems } = checkDocument({ version: 1, server });
  expect(problems).toEqual([]);
  return document!;
}

const context = (current: ConfigDocument, activeKeys: number): PlanContext => ({ current, resolves: () => true, localModels: new Set(), activeKeys });
const turnOn = { version: 1, server: { auth: { required: true } } };

describe('turning "require an access key" on', () => {
  it('is refused while no access key exists, with what to do', () => {
    const { plan, problems } = planChange(turnOn, false, context(documentWith({ auth: { required: false } }), 0));
    expect(plan).toBeUndefined();
    expect(problems).toEqual([{ path: 'server.auth.required', message: expect.stringMatching(/no access key exists.*Create a key first.*keys create/) }]);
  });

  it('is planned once a key exists', () => {
    const { plan, problems } = planChange(turnOn, false, context(documentWith({ auth: { required: false } }), 1));
    expect(problems).toEqual([]);
    expect(plan?.changes).toEqual([{ section: 'server', target: 'server', action: 'update', fields: ['auth.required'] }]);
  });

  it('leaves a requirement already in force alone, so other changes still go through after the last key is revoked', () => {
    const { problems } = planChange(
      { version: 1, server: { auth: { required: true }, cors: { origins: ['http://a.example'] } } },
      false,
      context(documentWith({ auth: { required: true } }), 0),
    );
    expect(problems).toEqual([]);
  });

  it('says it once when other machines are let in too (that rule asks for a key first as well)', () => {
    const { problems } = planChange(
      { version: 1, server: { host: '0.0.0.0', auth: { required: true } } },
      false,
      context(documentWith({ auth: { required: false } }), 0),
    );
    expect(problems).toEqual([expect.objectContaining({ path: 'server.host' })]);
  });
});
