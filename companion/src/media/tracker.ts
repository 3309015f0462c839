/**
 * Follows one submitted hosted job to its artifact: retrieves its status every poll interval,
 * and once the provider reports it completed, copies the MP4 into the data folder (written to a
 * .part file, then renamed) before the provider's copy expires. Nothing here ever submits again.
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MediaJobFailureCode } from '#shared/api/failures.js';
import { MEDIA_JOB_FAILURES, mediaFailure } from '../failures.js';
import type { Logger } from '../logger.js';
import type { JobRow, MediaStore } from './media-store.js';
import type { OpenAiVideos, ProviderVideo } from './openai-videos.js';

export interface TrackerOptions {
  store: MediaStore;
  mediaDir: string;
  videos: OpenAiVideos;
  intervalMs: number;
  signal: AbortSignal;
  log: Logger;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

const failed = (code: MediaJobFailureCode, message?: string) => JSON.stringify(mediaFailure(code, message));

/** A provider's own code is not Hearth's to pass on as one: it goes into the words of provider_failed. */
function providerFailure(error: ProviderVideo['error']): string {
  const words = error?.message ?? MEDIA_JOB_FAILURES.provider_failed;
  return error?.code ? `${words} (The provider's code: ${error.code}.)` : words;
}

/** Applies what the provider said about the job; returns true once nothing is left to do. */
function record(store: MediaStore, job: JobRow, video: ProviderVideo): void {
  store.update(job.id, {
    remote_id: video.id,
    progress: Math.round(video.progress ?? (video.status === 'completed' ? 100 : 0)),
    remote_expires_at: video.expires_at ?? null,
    status: video.status === 'completed' ? 'downloading' : video.status === 'failed' ? 'failed' : video.status,
    ...(video.status === 'failed'
      ? {
          error_json: failed('provider_failed', providerFailure(video.error)),
          completed_at: Date.now(),
        }
      : {}),
  });
}

export async function track(jobId: string, options: TrackerOptions): Promise<void> {
  const { store, videos, signal, log } = options;
  let failures = 0;
  while (!signal.aborted) {
    const job = store.job(jobId);
    if (!job || job.status === 'completed' || job.status === 'failed' || !job.remote_id) return;
    try {
      // Status first, always: a completed job is downloaded, never sent again.
      const video = await videos.retrieve(job.remote_id, signal);
      record(store, job, video);
      if (video.status === 'completed') {
        await download(options, job, video);
        return;
      }
      if (video.status === 'failed') return;
      failures = 0;
    } catch (error) {
      if (signal.aborted) return;
      failures++;
      log.warn({ job: jobId, err: error, failures }, 'hosted media status could not be retrieved; retrying');
      const expired = job.remote_expires_at !== null && job.remote_expires_at * 1000 < Date.now();
      if (expired) {
        store.update(jobId, {
          status: 'failed',
          completed_at: Date.now(),
          error_json: failed('expired'),
        });
        return;
      }
    }
    await sleep(options.intervalMs * Math.min(8, 2 ** Math.max(0, failures - 1)), signal);
  }
}

async function download(options: TrackerOptions, job: JobRow, video: ProviderVideo): Promise<void> {
  const file = join(options.mediaDir, `${job.id}.mp4`);
  const partial = `${file}.part`;
  const response = await options.videos.content(video.id, options.signal);
  try {
    await pipeline(Readable.fromWeb(response.body as never), createWriteStream(partial, { mode: 0o600 }));
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  options.store.update(job.id, { status: 'completed', progress: 100, artifact: file, completed_at: Date.now() });
}
