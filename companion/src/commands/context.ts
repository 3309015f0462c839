import type { OpenBrowser } from './browser.js';

/** What every `hearth` subcommand receives from the command line entry (cli.ts). */
export interface CommandContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Secret values are read from here, never from the command line. */
  stdin?: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** The default models folder (the data folder's models/), for commands that download. */
  modelsDir: string;
  /** Opens the sign-in file in a browser (`hearth serve`); the system's browser when not given. */
  openBrowser?: OpenBrowser;
}

/** A subcommand module: resolves with the process exit code. */
export interface Command {
  /** What `hearth COMMAND --help` prints. */
  usage: string;
  run(argv: string[], context: CommandContext): Promise<number>;
}
