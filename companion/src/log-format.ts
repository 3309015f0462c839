import pino, { type Logger as PinoLogger } from 'pino';
import { redactingLogMethod } from './redaction.js';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields a person does not need on every line (the request id stays in JSON logs). */
const UNSHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'err']);

/** One pino record as a line for a person: local time, level, message, other fields as key=value, then any error's stack. */
export function formatRecord(record: Record<string, unknown>): string {
  const time = new Date(typeof record.time === 'number' ? record.time : Date.now()).toTimeString().slice(0, 8);
  const level = (LEVELS[record.level as number] ?? String(record.level)).padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !UNSHOWN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const error = record.err as { message?: string; stack?: string } | undefined;
  const detail = error ? `\n${(error.stack ?? error.message ?? '').replace(/^/gm, '    ')}` : '';
  return `${time} ${level} ${String(record.msg ?? '')}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}${detail}\n`;
}

export interface LogSettings {
  /** HEARTH_LOG_LEVEL: info by default; debug adds a line per HTTP request. */
  level?: string;
  /** HEARTH_LOG_FORMAT: json, or text; unset means text on a terminal and JSON otherwise. */
  format?: string;
}

/**
 * The process logger, writing to `stream` (stderr): JSON lines for log collectors when the
 * stream is not a terminal or JSON is asked for, readable lines on a terminal.
 */
export function createLogger(settings: LogSettings, stream: NodeJS.WritableStream & { isTTY?: boolean; fd?: number }): PinoLogger {
  const options = {
    level: settings.level ?? 'info',
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'],
    // Every log call, from domain code or a request, goes through the one redaction.
    hooks: { logMethod: redactingLogMethod },
  };
  const json = settings.format === 'json' || (settings.format !== 'text' && stream.isTTY !== true);
  if (json) return pino(options, stream.fd === undefined ? stream : pino.destination(stream.fd));
  return pino(options, { write: (line: string) => void stream.write(formatRecord(JSON.parse(line) as Record<string, unknown>)) });
}
