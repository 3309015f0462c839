/**
 * The microphone: a recording with MediaRecorder (whatever the browser records: WebM/Opus in
 * Chromium and Firefox, MP4/AAC in Safari), decoded by the browser and turned into the WAV that
 * speech models take (wav.ts).
 */
import { speechWav } from './wav';

/** What went wrong with the microphone, in plain words, from what getUserMedia or MediaRecorder threw. */
export function microphoneProblem(error: unknown): string {
  const name = (error as { name?: string } | null)?.name ?? '';
  if (name === 'NotAllowedError' || name === 'SecurityError')
    return 'The microphone is blocked for this page. Allow it in the browser (the icon at the left of the address bar), then try again.';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No microphone was found. Connect one, then try again.';
  if (name === 'NotReadableError' || name === 'AbortError')
    return 'The microphone could not be started: another app may be using it. Close that app, then try again.';
  if (name === 'NotSupportedError' || name === 'TypeError')
    return 'This browser cannot record here. Recording needs a secure page (https, or this machine as 127.0.0.1) and a current browser.';
  return `The recording failed: ${(error as Error | null)?.message || 'the browser gave no reason'}.`;
}

/** A recording under way: stop() gives its sound, cancel() drops it; either way the microphone is released. */
export class Recording {
  readonly #recorder: MediaRecorder;
  readonly #stream: MediaStream;
  readonly #chunks: Blob[] = [];
  readonly #ended: Promise<Blob>;

  private constructor(stream: MediaStream) {
    this.#stream = stream;
    this.#recorder = new MediaRecorder(stream);
    this.#recorder.addEventListener('dataavailable', (event) => {
      if (event.data.size > 0) this.#chunks.push(event.data);
    });
    this.#ended = new Promise((resolve, reject) => {
      this.#recorder.addEventListener('stop', () => resolve(new Blob(this.#chunks, { type: this.#recorder.mimeType })), { once: true });
      this.#recorder.addEventListener('error', (event) => reject((event as ErrorEvent).error ?? new Error('The recorder stopped.')), { once: true });
    });
    this.#recorder.start();
  }

  /** Asks for the microphone (the browser may ask the person) and starts recording; throws what getUserMedia threw. */
  static async start(): Promise<Recording> {
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') throw new DOMException('No recording here', 'NotSupportedError');
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    try {
      return new Recording(stream);
    } catch (error) {
      for (const track of stream.getTracks()) track.stop();
      throw error;
    }
  }

  /** Ends the recording: its sound as the browser recorded it. */
  async stop(): Promise<Blob> {
    if (this.#recorder.state !== 'inactive') this.#recorder.stop();
    try {
      return await this.#ended;
    } finally {
      this.#release();
    }
  }

  /** Ends the recording and drops it. */
  cancel(): void {
    if (this.#recorder.state !== 'inactive') this.#recorder.stop();
    this.#ended.catch(() => undefined);
    this.#release();
  }

  #release(): void {
    for (const track of this.#stream.getTracks()) track.stop();
  }
}

/** A recording as a 16 kHz mono WAV: decoded by the browser (decodeAudioData), then encoded here. */
export async function recordingToWav(sound: Blob): Promise<Uint8Array> {
  const context = new AudioContext();
  try {
    const decoded = await context.decodeAudioData(await sound.arrayBuffer());
    const channels = Array.from({ length: decoded.numberOfChannels }, (_, index) => decoded.getChannelData(index));
    return speechWav(channels, decoded.sampleRate);
  } finally {
    void context.close();
  }
}
