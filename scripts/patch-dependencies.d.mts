export interface Hunk {
  before: string;
  after: string;
}

export interface PatchLog {
  warn(line: string): void;
  error(line: string): void;
}

export function parsePatch(text: string): { path: string; hunks: Hunk[] }[];
export function applyHunks(text: string, hunks: Hunk[]): { text: string; error?: undefined } | { error: string; text?: undefined };
export function patchDependencies(root: string, options?: { checkOnly?: boolean; log?: PatchLog }): number;
