import { success } from '../result.js';
import { attempt, checkCancelled, stringArgument, ToolError, toolInput, type BuiltinTool } from './tool.js';

/** Building a formatter loads time-zone data (about a millisecond); one per zone is kept. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 64;

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' });
    } catch {
      throw new ToolError(`"${zone}" is not a known time zone; use an IANA name such as "Europe/Paris".`);
    }
    if (formatters.size >= MAX_FORMATTERS) formatters.delete(formatters.keys().next().value!);
    formatters.set(zone, format);
  }
  return format;
}

const machineZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

export const currentTimeTool: BuiltinTool = {
  name: 'current_time',
  description: 'The current date and time: UTC, and in a time zone when one is given (an IANA name such as "Europe/Paris").',
  inputSchema: toolInput([], {
    timezone: { type: 'string', maxLength: 64, description: 'IANA time zone, e.g. "America/New_York" (default: the machine\'s zone).' },
  }),
  class: 'read',
  hostOnly: false,
  needsWorkspace: false,
  run: (args, context) =>
    attempt(() => {
      checkCancelled(context.signal);
      const now = new Date();
      const zone = stringArgument(args, 'timezone', { optional: true }) || machineZone;
      const local = formatter(zone).format(now);
      return success(`${now.toISOString()} (UTC)\n${local} (${zone})`, { utc: now.toISOString(), timezone: zone, local });
    }),
};
