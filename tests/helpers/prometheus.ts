/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every line
 * must be a HELP or TYPE line, a comment, a blank line or a sample; names, label names and label
 * values must be well formed (escapes `\\`, `\"`, `\n` only); a family's TYPE comes before its
 * samples and at most once; no series appears twice; counters are not negative; a histogram's
 * buckets are cumulative, end with `le="+Inf"`, and that bucket equals its `_count`.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition must end with a newline');
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 80))})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) return; // a plain comment
      const [, kind, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      const family = families.get(name) ?? { name, type: 'untyped' as const, samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE after samples of ${name}`);
        if ((family as Family & { typed?: boolean }).typed) throw new Error(`${where}: second TYPE for ${name}`);
        family.type = rest as Family['type'];
        (family as Family & { typed?: boolean }).typed = true;
      } else {
        if (family.help !== undefined) throw new Error(`${where}: second HELP for ${name}`);
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    const sample = parseSample(line, where);
    const key = `${sample.name}{${Object.entries(sample.labels)
      .sort()
      .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
      .join(',')}}`;
    if (seen.has(key)) throw new Error(`${where}: the series ${key} appears twice`);
    seen.add(key);
    const family = familyOf(families, sample.name);
    if (!family) {
      const untyped: Family = { name: sample.name, type: 'untyped', samples: [sample] };
      families.set(sample.name, untyped);
      return;
    }
    if (family.type === 'counter' && !(sample.value >= 0)) throw new Error(`${where}: a negative counter`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || family.type === 'summary')) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  let at = 0;
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`${where}: no metric name`);
  const name = nameMatch[0];
  at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(at));
      if (!labelMatch || !LABEL_NAME.test(labelMatch[0])) throw new Error(`${where}: bad label name`);
      const label = labelMatch[0];
      at += label.length;
      if (line[at] !== '=' || line[at + 1] !== '"') throw new Error(`${where}: expected ="`);
      at += 2;
      let value = '';
      for (;;) {
        const char = line[at];
        if (char === undefined) throw new Error(`${where}: unterminated label value`);
        if (char === '"') break;
        if (char === '\\') {
          const next = line[at + 1];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else throw new Error(`${where}: bad escape \\${next ?? ''}`);
          at += 2;
          continue;
        }
        value += char;
        at++;
      }
      at++;
      if (label in labels) throw new Error(`${where}: label ${label} twice`);
      labels[label] = value;
      if (line[at] === ',') at++;
      else if (line[at] !== '}') throw new Error(`${where}: expected , or }`);
    }
    at++;
  }
  const rest = line.slice(at);
  const valueMatch = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!valueMatch) throw new Error(`${where}: expected one space, a value and an optional timestamp`);
  const text = valueMatch[1]!;
  const value = text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : text === 'NaN' ? NaN : Number(text);
  if (Number.isNaN(value) && text !== 'NaN') throw new Error(`${where}: ${text} is not a number`);
  return { name, labels, value };
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  const counts = new Map<string, number>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      series.set(key, [...(series.get(key) ?? []), sample]);
    } else if (sample.name === `${family.name}_count`) counts.set(key, sample.value);
  }
  for (const [key, buckets] of series) {
    const bounds = buckets.map((bucket) => (bucket.labels.le === '+Inf' ? Infinity : Number(bucket.labels.le)));
    for (let index = 1; index < buckets.length; index++) {
      if (!(bounds[index]! > bounds[index - 1]!)) throw new Error(`${family.name} ${key}: bucket bounds not increasing`);
      if (buckets[index]!.value < buckets[index - 1]!.value) throw new Error(`${family.name} ${key}: buckets not cumulative`);
    }
    if (bounds.at(-1) !== Infinity) throw new Error(`${family.name} ${key}: no +Inf bucket`);
    if (counts.get(key) !== buckets.at(-1)!.value) throw new Error(`${family.name} ${key}: _count differs from the +Inf bucket`);
  }
}

/** The value of one series (labels must match exactly), or undefined when there is none. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = familyOf(families, name);
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return family?.samples.find((sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted)?.value;
}
