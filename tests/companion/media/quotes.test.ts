/**
 * Hosted-video quotes: the first frame of `video.from_image` is checked to be a picture before a
 * byte is stored, and the stored copy is deleted once it is no longer needed (the quote expired
 * unused, or its job was sent), at the latest at the next start. Quotes and jobs belong to the
 * access key that asked for them.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { samplePng } from '../../helpers/images.js';
import { get, hostedConfig, post, quoteOf, until, videoProvider, type HostedApp } from './hosted-app.js';

const videos = videoProvider();

const start = (dataDir?: string): Promise<HostedApp> => videos.open(hostedConfig(videos.fixture.url, 5), dataDir);

const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const fromImage = (input: string) => ({ operation: 'video.from_image', seconds: 4, input_image: input });
const stored = (dataDir: string) => readdirSync(join(dataDir, 'media')).filter((name) => name.startsWith('quote_'));

describe('the first frame', () => {
  it('is refused unless it is a picture, and nothing is stored for a refused quote', async () => {
    const { app, dataDir } = await start();
    const png = await samplePng(40, 30);
    const bad = [
      dataUrl('image/png', Buffer.from('not a picture at all')),
      dataUrl('image/png', png.subarray(0, 40)),
      dataUrl('image/jpeg', Buffer.alloc(1024 * 1024, 0xff)),
      dataUrl('image/webp', Buffer.from('RIFF....WEBPVP8 nonsense')),
      dataUrl('image/png', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')),
      dataUrl('image/gif', Buffer.from('GIF89a')),
      dataUrl('image/png', Buffer.from('%PDF-1.7 a document')),
      dataUrl('image/png', Buffer.alloc(0)),
      dataUrl('image/png', Buffer.from(png.toString('hex'))),
      dataUrl('image/png', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(4096, 7)])),
    ];
    for (const input of bad) {
      const refused = await quoteOf(app, fromImage(input));
      expect([refused.statusCode, refused.json().error.param]).toEqual([400, 'input_image']);
    }
    expect(stored(dataDir)).toEqual([]);

    // A JPEG sent as image/png is stored and sent as what it is.
    const jpeg = await sharp(png).jpeg().toBuffer();
    const quote = (await quoteOf(app, fromImage(dataUrl('image/png', jpeg)))).json();
    expect(stored(dataDir)).toEqual([`${quote.id}.jpg`]);
    const job = (await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true })).json();
    expect(videos.fixture.videos.get(job.remote_id)?.reference).toEqual({ type: 'image/jpeg', bytes: jpeg.length });
    // Sent: the stored copy is gone.
    expect(stored(dataDir)).toEqual([]);
  });

  it('is deleted when its quote expires unused, and at start for quotes that expired meanwhile', async () => {
    const first = await start();
    const frame = dataUrl('image/png', await samplePng(64, 64));
    const quotes = [];
    for (let index = 0; index < 3; index++) quotes.push((await quoteOf(first.app, fromImage(frame))).json());
    expect(stored(first.dataDir)).toHaveLength(3);
    const expire = (id: string) => first.services.db.prepare('UPDATE media_quotes SET expires_at = ? WHERE id = ?').run(Date.now() - 1, id);
    expire(quotes[0].id);
    // The next quote sweeps what expired.
    const fourth = (await quoteOf(first.app)).json();
    expect(fourth.id).toMatch(/^quote_/);
    expect(stored(first.dataDir).sort()).toEqual([`${quotes[1].id}.png`, `${quotes[2].id}.png`].sort());
    const row = first.services.db.prepare('SELECT input_image FROM media_quotes WHERE id = ?').get(quotes[0].id) as { input_image: string | null };
    expect(row.input_image).toBeNull();

    expire(quotes[1].id);
    await videos.close(first);
    const second = await start(first.dataDir);
    expect(stored(second.dataDir)).toEqual([`${quotes[2].id}.png`]);
    // The one still valid can be confirmed, with its first frame.
    const job = (await post(second.app, '/v1/media/jobs', { quote_id: quotes[2].id, confirm: true })).json();
    expect(videos.fixture.videos.get(job.remote_id)?.reference?.type).toBe('image/png');
    expect(existsSync(join(second.dataDir, 'media', `${quotes[2].id}.png`))).toBe(false);
  });
});

describe('quotes and jobs of access keys', () => {
  it("keep each key's quotes and jobs to itself; no key sees them all", async () => {
    const { app, services } = await start();
    const alice = services.keys.create({ label: 'alice', scopes: ['images'] }).key;
    const bob = services.keys.create({ label: 'bob', scopes: ['images'] }).key;
    const quote = (await quoteOf(app, {}, alice)).json();
    const stolen = await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true }, bob);
    expect([stolen.statusCode, stolen.json().error.code]).toEqual([404, 'quote_not_found']);
    const job = (await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true }, alice)).json();
    await until(app, job.id, 'completed');

    expect((await get(app, '/v1/media/jobs', bob)).json().data).toEqual([]);
    expect((await get(app, '/v1/media/jobs', alice)).json().data.map((entry: { id: string }) => entry.id)).toEqual([job.id]);
    expect((await get(app, '/v1/media/jobs')).json().data.map((entry: { id: string }) => entry.id)).toContain(job.id);
    for (const url of [`/v1/media/jobs/${job.id}`, `/v1/media/jobs/${job.id}/content`]) {
      const refused = await get(app, url, bob);
      expect([url, refused.statusCode, refused.json().error.code]).toEqual([url, 404, 'job_not_found']);
    }
    expect((await get(app, `/v1/media/jobs/${job.id}/content`, alice)).headers['content-type']).toBe('video/mp4');
  });
});
