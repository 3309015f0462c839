/** `hearth pull <spec> [--models-dir DIR]`: download a GGUF into the models folder. */
import path from 'node:path';
import { pullModel, type PullProgress } from '../models/pull.js';
import { helpHint } from './arguments.js';
import type { CommandContext } from './context.js';

export const usage = `Usage: hearth pull <spec> [--models-dir DIR]

Downloads a GGUF model into the models folder (resumable: run again after an interruption).

  <spec>   owner/repo            a Q4_K_M file of a Hugging Face repo, else its smallest GGUF
           owner/repo:QUANT      the file of that quantization, e.g. owner/repo:Q8_0
           owner/repo/file.gguf  one file of a repo
           https://.../x.gguf    any direct link

Set HF_TOKEN for gated or private repositories, HF_ENDPOINT for a mirror.
`;

interface ParsedArgs {
  spec?: string;
  modelsDir?: string;
  help: boolean;
  error?: string;
}

function parseArgs(argv: string[]): ParsedArgs {
  const args = argv[0] === 'pull' ? argv.slice(1) : argv;
  const parsed: ParsedArgs = { help: false };
  const positional: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '-h' || arg === '--help') parsed.help = true;
    else if (arg === '--models-dir') {
      const value = args[++index];
      if (value === undefined || value === '') return { ...parsed, error: '--models-dir needs a folder' };
      parsed.modelsDir = value;
    } else if (arg.startsWith('--models-dir=')) {
      const value = arg.slice('--models-dir='.length);
      if (value === '') return { ...parsed, error: '--models-dir needs a folder' };
      parsed.modelsDir = value;
    } else if (arg.startsWith('-') && arg !== '-') return { ...parsed, error: `unknown option ${arg}` };
    else positional.push(arg);
  }
  if (parsed.help) return parsed;
  if (positional.length === 0) return { ...parsed, error: 'missing <spec>' };
  if (positional.length > 1) return { ...parsed, error: `one <spec> at a time (got ${positional.length})` };
  parsed.spec = positional[0]!;
  return parsed;
}

export async function run(argv: string[], context: CommandContext): Promise<number> {
  const args = parseArgs(argv);
  if (args.help) {
    context.stdout.write(usage);
    return 0;
  }
  if (args.error !== undefined || args.spec === undefined) {
    context.stderr.write(`hearth pull: ${args.error ?? 'missing <spec>'}\n${helpHint('pull')}\n`);
    return 2;
  }
  const modelsDir = path.resolve(args.modelsDir ?? context.modelsDir);
  const progress = createProgress(context.stderr);
  const controller = new AbortController();
  // Every SIGINT (a terminal's Ctrl+C, and npm passing it on again) cancels the same download, once.
  const onSignal = () => controller.abort();
  process.on('SIGINT', onSignal);
  try {
    const result = await pullModel({
      spec: args.spec,
      modelsDir,
      signal: controller.signal,
      onProgress: (update) => progress.update(update),
    });
    progress.finish();
    context.stdout.write(`${result.path}\n`);
    return 0;
  } catch (error) {
    progress.finish();
    if (controller.signal.aborted) {
      context.stderr.write('hearth pull: cancelled; run the same command again to resume.\n');
      return 130;
    }
    const message = error instanceof Error ? error.message : String(error);
    context.stderr.write(`hearth pull: ${message}\n`);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
}

// ---------------------------------------------------------------- progress display

const MB = 1_000_000;

function megabytes(bytes: number): string {
  return (bytes / MB).toFixed(1);
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

interface Progress {
  update(progress: PullProgress): void;
  finish(): void;
}

/** A redrawn bar on a terminal; a plain line every 10% otherwise (logs, CI). */
export function createProgress(stream: NodeJS.WritableStream, now: () => number = Date.now): Progress {
  const tty = (stream as { isTTY?: boolean }).isTTY === true;
  let file = '';
  let started = 0;
  let startBytes = 0;
  let lastDraw = 0;
  let lastDecile = -1;
  let lastUnknownStep = -1;
  let drawn = false;

  function rate(received: number): number {
    const seconds = (now() - started) / 1000;
    return seconds > 0 ? (received - startBytes) / seconds : 0;
  }

  function line(update: PullProgress): string {
    const speed = rate(update.received);
    const speedText = `${megabytes(speed)} MB/s`;
    if (update.total === null || update.total === 0) return `${file}  ${megabytes(update.received)} MB  ${speedText}`;
    const fraction = Math.min(1, update.received / update.total);
    const eta = speed > 0 ? (update.total - update.received) / speed : Number.NaN;
    const columns = (stream as { columns?: number }).columns ?? 80;
    const stats = ` ${String(Math.floor(fraction * 100)).padStart(3)}%  ${megabytes(update.received)}/${megabytes(update.total)} MB  ${speedText}  ETA ${duration(eta)}`;
    const width = Math.max(10, Math.min(40, columns - stats.length - file.length - 4));
    const filled = Math.round(fraction * width);
    return `${file} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}]${stats}`;
  }

  return {
    update(update) {
      if (update.file !== file) {
        if (tty && drawn) stream.write('\n');
        file = update.file;
        started = now();
        startBytes = update.received;
        lastDraw = 0;
        drawn = false;
        lastDecile = update.total ? Math.floor((update.received / update.total) * 10) : 0;
        lastUnknownStep = Math.floor(update.received / (100 * MB));
        if (!tty) {
          const size = update.total === null ? 'size unknown' : `${megabytes(update.total)} MB`;
          const resume = update.received > 0 ? `, resuming at ${megabytes(update.received)} MB` : '';
          stream.write(`${file}: ${size}${resume}\n`);
        }
      }
      const complete = update.total !== null && update.received >= update.total;
      if (tty) {
        if (!complete && drawn && now() - lastDraw < 100) return;
        lastDraw = now();
        const columns = (stream as { columns?: number }).columns ?? 80;
        stream.write(`\r${line(update).slice(0, Math.max(1, columns - 1))}\x1b[K`);
        drawn = true;
        return;
      }
      if (update.total !== null && update.total > 0) {
        const decile = Math.min(10, Math.floor((update.received / update.total) * 10));
        if (decile <= lastDecile) return;
        lastDecile = decile;
        const speed = megabytes(rate(update.received));
        stream.write(`${file}: ${decile * 10}% (${megabytes(update.received)} of ${megabytes(update.total)} MB, ${speed} MB/s)\n`);
        return;
      }
      const step = Math.floor(update.received / (100 * MB));
      if (step <= lastUnknownStep) return;
      lastUnknownStep = step;
      stream.write(`${file}: ${megabytes(update.received)} MB\n`);
    },
    finish() {
      if (tty && drawn) stream.write('\n');
      drawn = false;
    },
  };
}
