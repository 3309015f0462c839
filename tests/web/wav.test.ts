/**
 * The app's microphone turns a recording into the WAV speech models take (web/src/lib/media/wav.ts):
 * one channel, 16 kHz, 16-bit PCM. The file is read back here as a WAV reader would (its header,
 * then its samples), and the recording errors are said in plain words.
 */
import { describe, expect, it } from 'vitest';
import { microphoneProblem } from '../../web/src/lib/media/recording';
import { encodeWav, mono, resample, speechWav, SPEECH_RATE } from '../../web/src/lib/media/wav';

/** A WAV file's header fields and samples, as a reader takes them. */
function readWav(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  const dataBytes = view.getUint32(40, true);
  return {
    riff: text(0),
    riffSize: view.getUint32(4, true),
    wave: text(8),
    fmt: text(12),
    pcm: view.getUint16(20, true),
    channels: view.getUint16(22, true),
    rate: view.getUint32(24, true),
    byteRate: view.getUint32(28, true),
    bits: view.getUint16(34, true),
    data: text(36),
    samples: Array.from({ length: dataBytes / 2 }, (_, index) => view.getInt16(44 + index * 2, true)),
  };
}

/** `seconds` of a `frequency` Hz tone at `rate` Hz. */
function tone(seconds: number, frequency: number, rate: number): Float32Array {
  return Float32Array.from({ length: Math.round(seconds * rate) }, (_, index) => 0.5 * Math.sin((2 * Math.PI * frequency * index) / rate));
}

describe('encodeWav', () => {
  it('writes a RIFF WAVE file of 16-bit PCM, one channel, at the given rate', () => {
    const wav = readWav(encodeWav(Float32Array.from([0, 0.5, -0.5, 1, -1]), 16_000));
    expect(wav).toMatchObject({ riff: 'RIFF', wave: 'WAVE', fmt: 'fmt ', data: 'data', pcm: 1, channels: 1, rate: 16_000, byteRate: 32_000, bits: 16 });
    expect(wav.riffSize).toBe(36 + 5 * 2);
    expect(wav.samples).toEqual([0, 16383, -16384, 32767, -32768]);
  });

  it('clips samples beyond full scale instead of wrapping them round', () => {
    expect(readWav(encodeWav(Float32Array.from([1.7, -3]), 8000)).samples).toEqual([32767, -32768]);
  });
});

describe('mono and resample', () => {
  it('mixes channels into their mean', () => {
    expect(Array.from(mono([Float32Array.from([1, 0.5]), Float32Array.from([0, -0.5])]))).toEqual([0.5, 0]);
    expect(mono([]).length).toBe(0);
  });

  it('brings 48 kHz down to 16 kHz with the duration kept, averaging what each sample covers', () => {
    const down = resample(Float32Array.from([3, 0, 0, 6, 6, 6]), 48_000, 16_000);
    expect(Array.from(down)).toEqual([1, 6]);
    expect(resample(tone(1, 440, 48_000), 48_000, 16_000).length).toBe(16_000);
  });

  it('brings 8 kHz up to 16 kHz by reading between neighbours', () => {
    expect(Array.from(resample(Float32Array.from([0, 1]), 8000, 16_000))).toEqual([0, 0.5, 1, 1]);
  });

  it('keeps a tone below the new rate’s half as it was (its loudness, its zero crossings)', () => {
    const out = resample(tone(0.5, 300, 44_100), 44_100, SPEECH_RATE);
    const peak = Math.max(...out);
    expect(peak).toBeGreaterThan(0.45);
    expect(peak).toBeLessThanOrEqual(0.5);
    const crossings = out.reduce((count, sample, index) => count + (index > 0 && Math.sign(sample) !== Math.sign(out[index - 1]!) ? 1 : 0), 0);
    // 300 Hz for half a second crosses zero about 300 times.
    expect(Math.abs(crossings - 300)).toBeLessThanOrEqual(3);
  });
});

describe('speechWav', () => {
  it('turns a decoded stereo 48 kHz recording into a mono 16 kHz WAV of the same length', () => {
    const left = tone(2, 440, 48_000);
    const wav = speechWav([left, left], 48_000);
    const read = readWav(wav);
    expect(read.channels).toBe(1);
    expect(read.rate).toBe(16_000);
    expect(read.samples.length).toBe(32_000);
    expect(wav.length).toBe(44 + 32_000 * 2);
    expect(Math.max(...read.samples)).toBeGreaterThan(14_000);
  });
});

describe('microphoneProblem', () => {
  it('says a blocked microphone, a missing one and a busy one in plain words', () => {
    expect(microphoneProblem(new DOMException('Permission denied', 'NotAllowedError'))).toMatch(/blocked for this page\. Allow it/);
    expect(microphoneProblem(new DOMException('Requested device not found', 'NotFoundError'))).toMatch(/No microphone was found/);
    expect(microphoneProblem(new DOMException('Could not start audio source', 'NotReadableError'))).toMatch(/another app may be using it/);
    expect(microphoneProblem(new Error('boom'))).toBe('The recording failed: boom.');
  });
});
