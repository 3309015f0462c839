import { createHash } from 'node:crypto';

/** Longest exposed name: OpenAI-compatible clients accept function names of 1-64 of [A-Za-z0-9_-]. */
export const MAX_NAME_LENGTH = 64;

export interface NameRequest {
  service: string;
  tool: string;
}

/** `<service>_<tool>` with every other character than letters, digits, `_` and `-` replaced by `_`. */
export function baseName(service: string, tool: string): string {
  const raw = `${service}_${tool}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return raw.length <= MAX_NAME_LENGTH ? raw : withSuffix(raw, service, tool);
}

function withSuffix(base: string, service: string, tool: string, length = 6): string {
  const suffix = createHash('sha256').update(`${service}\0${tool}`).digest('hex').slice(0, length);
  return `${base.slice(0, MAX_NAME_LENGTH - length - 1)}_${suffix}`;
}

/**
 * Exposed names for every discovered tool, deterministic for a given set: tools whose safe names
 * coincide are ordered by (service, tool) and the first keeps the plain name; the others, and any
 * tool whose name is a protected built-in name, get a suffix derived from their service and tool
 * names. A protected name is never given to a service tool.
 */
export function assignNames(requests: NameRequest[], reserved: ReadonlySet<string>): Map<NameRequest, string> {
  const groups = new Map<string, NameRequest[]>();
  for (const request of requests) {
    const base = baseName(request.service, request.tool);
    groups.set(base, [...(groups.get(base) ?? []), request]);
  }
  const used = new Set(reserved);
  const result = new Map<NameRequest, string>();
  const plain = [...groups.keys()].sort();
  // Plain names first, so a suffixed name can never take a plain one.
  for (const base of plain) if (!reserved.has(base)) used.add(base);
  for (const base of plain) {
    const members = [...groups.get(base)!].sort((a, b) => compare(a.service, b.service) || compare(a.tool, b.tool));
    members.forEach((member, index) => {
      if (index === 0 && !reserved.has(base)) {
        result.set(member, base);
        return;
      }
      let length = 6;
      let name = withSuffix(base, member.service, member.tool, length);
      while (used.has(name) && length < 32) name = withSuffix(base, member.service, member.tool, ++length);
      used.add(name);
      result.set(member, name);
    });
  }
  return result;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
