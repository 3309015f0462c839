import { attempt, stringArgument, success, ToolError, type BuiltinTool } from './tool.js';

export const currentTimeTool: BuiltinTool = {
  name: 'current_time',
  description: 'The current date and time: UTC, and in a time zone when one is given (an IANA name such as "Europe/Paris").',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { timezone: { type: 'string', maxLength: 64, description: 'IANA time zone, e.g. "America/New_York" (default: the machine\'s zone).' } },
  },
  class: 'read',
  hostOnly: false,
  needsWorkspace: false,
  run: (args) =>
    attempt(() => {
      const now = new Date();
      const zone = stringArgument(args, 'timezone', { optional: true }) || Intl.DateTimeFormat().resolvedOptions().timeZone;
      let local: string;
      try {
        local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' }).format(now);
      } catch {
        throw new ToolError(`"${zone}" is not a known time zone; use an IANA name such as "Europe/Paris".`);
      }
      return success(`${now.toISOString()} (UTC)\n${local} (${zone})`, { utc: now.toISOString(), timezone: zone, local });
    }),
};
