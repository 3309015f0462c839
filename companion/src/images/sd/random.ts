/** Seeded random numbers: the same seed gives the same latents, so a seed reproduces an image. */

/** xoshiro128** seeded through splitmix32: fast, 32-bit state words, good statistical quality. */
export class SeededRandom {
  private readonly state = new Uint32Array(4);
  private spare: number | undefined;

  constructor(seed: number) {
    let value = seed >>> 0;
    for (let index = 0; index < 4; index++) {
      value = (value + 0x9e3779b9) >>> 0;
      let mixed = value;
      mixed = Math.imul(mixed ^ (mixed >>> 16), 0x85ebca6b);
      mixed = Math.imul(mixed ^ (mixed >>> 13), 0xc2b2ae35);
      this.state[index] = (mixed ^ (mixed >>> 16)) >>> 0;
    }
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    const s = this.state;
    const result = Math.imul(rotate(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const shifted = (s[1]! << 9) >>> 0;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= shifted;
    s[3] = rotate(s[3]!, 11);
    return result / 4294967296;
  }

  /** Standard normal (Box-Muller, both values used). */
  normal(): number {
    if (this.spare !== undefined) {
      const value = this.spare;
      this.spare = undefined;
      return value;
    }
    let u = 0;
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const radius = Math.sqrt(-2 * Math.log(u));
    this.spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  }

  normals(count: number): Float32Array {
    const values = new Float32Array(count);
    for (let index = 0; index < count; index++) values[index] = this.normal();
    return values;
  }
}

function rotate(value: number, bits: number): number {
  return ((value << bits) | (value >>> (32 - bits))) >>> 0;
}

/** A seed for a request that gave none. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 4294967296);
}
