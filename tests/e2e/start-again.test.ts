import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithoutAdmin } from '../helpers/admin-fetch.js';
import { cleanEnv, HEARTH_BIN, runNode } from '../helpers/hearth-process.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { untilTrue } from '../helpers/until.js';

/*
 * Starting Hearth again on the data folder of a running one (a second `npm start`) opens the
 * running one, signed in, as the first start did, and exits 0: no second server, no error.
 * HEARTH_BROWSER stands in for the system's browser command and records what it was given.
 */

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ dataDir: await newDataDir(false) });
});

afterAll(async () => {
  await server?.stop();
});

describe('starting Hearth again on a folder it runs on', () => {
  it('says it is already running, opens the browser signed in on the running one, and exits 0', async () => {
    const folder = tempFolder('browser-command');
    const opened = join(folder, 'opened.txt');
    const recorder = join(folder, 'record.mjs');
    writeFileSync(recorder, "import { appendFileSync } from 'node:fs';\nappendFileSync(process.argv[2], JSON.stringify(process.argv.slice(3)) + '\\n');\n");
    const args = ['serve', '--port', '0', '--data-dir', server.dataDir, '--no-external-models'];

    const again = await runNode(HEARTH_BIN, args, { env: cleanEnv({ HEARTH_BROWSER: `${process.execPath} ${recorder} ${opened} %s` }) });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`Hearth is already running at ${server.url}\n`);
    expect(again.stderr).toContain('Opening Hearth in your browser, signed in.');

    // The browser was given the private sign-in file, whose one-time link signs the app in on the running server.
    await untilTrue(() => existsSync(opened), 'the browser command');
    const [file] = JSON.parse(readFileSync(opened, 'utf8').trim()) as string[];
    expect(file).toBe(join(server.dataDir, 'sign-in.html'));
    const code = new RegExp(`${server.url}/sign-in#([A-Za-z0-9_-]+)`).exec(readFileSync(file!, 'utf8'))?.[1];
    expect(code).toBeDefined();
    const signedIn = await fetchWithoutAdmin(`${server.url}/admin/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ code }),
    });
    expect(signedIn.status).toBe(200);

    // The running server was left alone: it still holds the folder and answers.
    expect(readFileSync(join(server.dataDir, 'hearth.lock'), 'utf8').split(' ')[0]).toBe(String(server.process.pid));
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('with --no-browser it opens nothing and says how to sign in', async () => {
    const again = await runNode(HEARTH_BIN, ['serve', '--no-browser', '--data-dir', server.dataDir, '--no-external-models']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`Hearth is already running at ${server.url}\n`);
    expect(again.stderr).toContain(`To sign the app in, run npm run hearth -- open --data-dir ${server.dataDir} on this machine`);
    expect(again.stderr).not.toContain('Opening Hearth');
  });

  it('on its port with another data folder, says another Hearth runs there and exits 1', async () => {
    const port = new URL(server.url).port;
    const other = await newDataDir(false);
    const result = await runNode(HEARTH_BIN, ['serve', '--port', port, '--data-dir', other, '--no-external-models']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `Port ${port} on 127.0.0.1 is already in use by another Hearth (http://127.0.0.1:${port}), one that runs on another data folder than ${other}.`,
    );
    expect(result.stderr).toContain('Open that one, or start on a free port: npm run hearth -- serve --port 0');
  });
});
