/**
 * Sound as speech models take it: one channel, 16 kHz, 16-bit PCM in a WAV file. A recording
 * (MediaRecorder gives WebM/Opus in Chromium, MP4/AAC in Safari) is decoded by the browser
 * (recording.ts) and its samples come here; nothing in this module needs a browser.
 */

/** The sample rate speech encoders (Whisper's, Voxtral's, Qwen2.5-Omni's) work at. */
export const SPEECH_RATE = 16_000;

/** Channels mixed into one, each sample the channels' mean. */
export function mono(channels: readonly Float32Array[]): Float32Array {
  if (channels.length === 0) return new Float32Array(0);
  if (channels.length === 1) return channels[0]!;
  const length = Math.min(...channels.map((channel) => channel.length));
  const mixed = new Float32Array(length);
  for (const channel of channels) for (let index = 0; index < length; index++) mixed[index] = mixed[index]! + channel[index]! / channels.length;
  return mixed;
}

/**
 * Samples at `from` Hz made `to` Hz. Going down, each output sample is the mean of the input
 * samples it covers (so tones above the new rate's half fade instead of folding back as noise);
 * going up, it is read between its two neighbours.
 */
export function resample(samples: Float32Array, from: number, to: number): Float32Array {
  if (from === to || samples.length === 0) return samples;
  const ratio = from / to;
  const length = Math.max(1, Math.round(samples.length / ratio));
  const out = new Float32Array(length);
  for (let index = 0; index < length; index++) {
    if (ratio > 1) {
      const start = Math.floor(index * ratio);
      const end = Math.min(samples.length, Math.max(start + 1, Math.floor((index + 1) * ratio)));
      let sum = 0;
      for (let at = start; at < end; at++) sum += samples[at]!;
      out[index] = sum / (end - start);
    } else {
      const position = index * ratio;
      const before = Math.floor(position);
      const after = Math.min(before + 1, samples.length - 1);
      const weight = position - before;
      out[index] = samples[before]! * (1 - weight) + samples[after]! * weight;
    }
  }
  return out;
}

/** A WAV file (RIFF, PCM, 16-bit, one channel) of `samples` (-1 to 1; beyond is clipped) at `rate` Hz. */
export function encodeWav(samples: Float32Array, rate: number): Uint8Array {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(bytes.buffer);
  const text = (at: number, value: string) => [...value].forEach((letter, index) => view.setUint8(at + index, letter.charCodeAt(0)));
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true); // the format chunk's size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // one channel
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true); // bytes a second
  view.setUint16(32, 2, true); // bytes a sample
  view.setUint16(34, 16, true); // bits a sample
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  samples.forEach((sample, index) => {
    const clipped = Math.max(-1, Math.min(1, sample));
    view.setInt16(44 + index * 2, clipped < 0 ? clipped * 0x8000 : clipped * 0x7fff, true);
  });
  return bytes;
}

/** A decoded recording's channels as the WAV speech models take: mixed to one channel, at 16 kHz. */
export function speechWav(channels: readonly Float32Array[], rate: number): Uint8Array {
  return encodeWav(resample(mono(channels), rate, SPEECH_RATE), SPEECH_RATE);
}
