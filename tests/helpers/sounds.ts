/** Sounds for tests: a WAV file as llama.cpp's decoder and `input_audio` take it. */

/**
 * A WAV file (16-bit PCM, mono, 16 kHz: what audio projectors listen at) of a `frequency` Hz tone
 * lasting `seconds`.
 */
export function tinyWav(seconds = 1, frequency = 440): Buffer {
  const rate = 16_000;
  const samples = Math.round(seconds * rate);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVE', 8, 'latin1');
  wav.write('fmt ', 12, 'latin1');
  wav.writeUInt32LE(16, 16); // the format chunk's size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // one channel
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28); // bytes a second
  wav.writeUInt16LE(2, 32); // bytes a frame
  wav.writeUInt16LE(16, 34); // bits a sample
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples * 2, 40);
  for (let index = 0; index < samples; index++) wav.writeInt16LE(Math.round(12_000 * Math.sin((2 * Math.PI * frequency * index) / rate)), 44 + index * 2);
  return wav;
}
