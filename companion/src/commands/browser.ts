/**
 * Opening the app in the person's browser, already signed in, as Jupyter does: the one-time
 * sign-in code goes into a private HTML file in the data folder that redirects to the app's
 * sign-in page with the code in the fragment, and the browser is started with the file's path.
 * The code itself never appears on a command line, which every user of the machine can read.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeFileAtomic } from '../store/files.js';

/**
 * Starts a browser on a local file. Resolves once the opener started, rejects when it could
 * not; `failed` hears about an opener that started but then reported failure.
 */
export type OpenBrowser = (file: string, failed: () => void) => Promise<void>;

const OFF = /^(|0|false|no|off|none)$/i;

/** The sign-in file of a data folder (mode 0600, inside the 0700 data folder; removed when the server stops). */
export function signInFile(dataDir: string): string {
  return join(dataDir, 'sign-in.html');
}

/**
 * Why the browser is not opened, or undefined when it is. HEARTH_BROWSER (a command) overrides
 * the guesses; otherwise a terminal on a machine with a display is needed, outside CI.
 */
export function browserRefusal(options: { noBrowser: boolean; env: NodeJS.ProcessEnv; interactive: boolean; platform?: NodeJS.Platform }): string | undefined {
  const { env } = options;
  const platform = options.platform ?? process.platform;
  if (options.noBrowser) return '--no-browser';
  if (env.HEARTH_BROWSER !== undefined) return OFF.test(env.HEARTH_BROWSER.trim()) ? 'HEARTH_BROWSER is off' : undefined;
  if (env.CI !== undefined && !/^(|0|false)$/i.test(env.CI)) return 'running under CI';
  if (!options.interactive) return 'not started from a terminal';
  if (platform !== 'darwin' && platform !== 'win32' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return 'no display';
  return undefined;
}

/**
 * The opener: HEARTH_BROWSER when set (a command; the file's path is added as its last
 * argument, or put where `%s` stands), else the system's (`open`, `start`, `xdg-open`).
 */
export function systemBrowser(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): OpenBrowser {
  return (file, failed) => {
    const custom = env.HEARTH_BROWSER?.trim();
    let program: string;
    let args: string[];
    if (custom) {
      const words = custom.split(/\s+/);
      program = words[0]!;
      args = words.slice(1).includes('%s') ? words.slice(1).map((word) => (word === '%s' ? file : word)) : [...words.slice(1), file];
    } else if (platform === 'darwin') [program, args] = ['open', [file]];
    else if (platform === 'win32') [program, args] = ['cmd', ['/d', '/c', 'start', '""', pathToFileURL(file).href]];
    else [program, args] = ['xdg-open', [file]];
    return new Promise((resolve, reject) => {
      const child = spawn(program, args, { stdio: 'ignore', detached: true, windowsHide: true });
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
      child.once('exit', (code) => {
        if (code !== 0 && code !== null) failed();
      });
    });
  };
}

/** A page that sends the browser on to `url` (the code rides in its fragment, which no server sees). */
export function signInPage(url: string): string {
  const attribute = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const script = JSON.stringify(url).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="refresh" content="0;url=${attribute}" />
    <title>Opening Hearth…</title>
  </head>
  <body>
    <p>Opening Hearth… If nothing happens, <a href="${attribute}">open Hearth</a>.</p>
    <script>location.replace(${script});</script>
  </body>
</html>
`;
}

/** Writes the sign-in file (0600) for `url`; returns its path. */
export function writeSignInFile(dataDir: string, url: string): string {
  const file = signInFile(dataDir);
  writeFileAtomic(file, signInPage(url), 0o600);
  return file;
}
