import { describe, expect, it } from 'vitest';
import { asOwner, sharedApp } from '../../helpers/app.js';

/*
 * Each route family has its own body limit (14): server.limits.memory_body_mb for /memory,
 * admin_body_kb for /admin, body_limit_mb for inference.
 */

const hearth = sharedApp({ withModel: false });

/** An ingest body of about `mib` MiB. */
function ingestOf(mib: number): string {
  const turns = 2000;
  const side = 'x'.repeat(Math.floor((mib * 1024 * 1024) / turns / 2) - 40);
  return JSON.stringify({
    agent_id: 'big',
    conversation_id: 'c',
    skip_extraction: true,
    turns: Array.from({ length: turns }, () => ({ user: side, assistant: side })),
  });
}

describe('body limits per family', () => {
  it('/memory takes bodies up to server.limits.memory_body_mb (16 MiB), beyond the 8 MiB inference limit', async () => {
    const body = ingestOf(14.4);
    expect(body.length).toBeGreaterThan(14 * 1024 * 1024);
    const accepted = await hearth.app.inject({ method: 'POST', url: '/memory/ingest', headers: { 'content-type': 'application/json' }, payload: body });
    expect(accepted.statusCode, accepted.body.slice(0, 300)).toBe(200);
    const refused = await hearth.app.inject({
      method: 'POST',
      url: '/memory/ingest',
      headers: { 'content-type': 'application/json' },
      payload: ingestOf(16.5),
    });
    expect(refused.statusCode).toBe(413);
    expect(refused.json().error.code).toBe('request_too_large');
  });

  it('/admin takes at most server.limits.admin_body_kb (512 KiB) on every route', async () => {
    const response = await hearth.app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'x'.repeat(600 * 1024) } }));
    expect(response.statusCode, response.body.slice(0, 300)).toBe(413);
  });
});
