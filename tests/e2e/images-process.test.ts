/** A real `hearth serve` killed with SIGKILL mid-generation: after a restart the job shows failed. */
import { describe, expect, it } from 'vitest';
import { imageDataDir, SLOW_UNET } from '../helpers/images.js';
import { startServer } from '../helpers/server.js';

describe('an image job interrupted by SIGKILL', () => {
  it('is failed (job_interrupted) after the restart, and new jobs run', async () => {
    const dataDir = imageDataDir({ slow: SLOW_UNET });
    const first = await startServer({ dataDir, withModel: false });
    let id: string | undefined;
    try {
      const response = await fetch(`${first.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow', prompt: 'interrupted', size: '256x256', steps: 150, stream: true }),
      });
      // Read until the first step, keeping the stream open: a client that leaves cancels its job.
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('event: image.progress')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended early: ${text}`);
        text += decoder.decode(value, { stream: true });
        id ??= /"job_id":"(job_[\w-]+)"/.exec(text)?.[1];
      }
      expect(id).toBeDefined();
      expect((await (await fetch(`${first.url}/v1/images/jobs/${id}`)).json()).status).toBe('generating');
    } finally {
      await first.stop('SIGKILL');
    }
    const second = await startServer({ dataDir, withModel: false });
    try {
      const job = await (await fetch(`${second.url}/v1/images/jobs/${id}`)).json();
      expect(job).toMatchObject({ status: 'failed', error: { code: 'job_interrupted', type: 'server_error' } });
      expect(job.finished_at).not.toBeNull();
      const next = await fetch(`${second.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow', prompt: 'after the restart', size: '64x64', steps: 1 }),
      });
      expect(next.status).toBe(200);
    } finally {
      await second.stop();
    }
  });
});
