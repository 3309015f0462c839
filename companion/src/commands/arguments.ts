import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * A command line a subcommand cannot use; the entry (cli.ts) prints it and one line of what to do
 * (`hint`, or where to read the command's options), not the whole usage, and exits 2.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** The line under an argument error: where the command's options are explained. */
export function helpHint(name?: string): string {
  return name ? `Run "hearth ${name} --help" for its options.` : 'Run "hearth --help" for the commands.';
}

/** Whether the arguments ask for help (`--help` or `-h` anywhere before a `--`). */
export function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** node:util parseArgs, with its errors turned into one short sentence for a person. */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(readable(error as Error & { code?: string }));
  }
}

function readable(error: Error & { code?: string }): string {
  const quoted = /'([^']+)'/.exec(error.message)?.[1]?.replace(/ <value>$/, '') ?? '';
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(error.message) ? `${quoted} takes no value` : `${quoted} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${quoted}`;
    default:
      return error.message.split('. ')[0]!;
  }
}
