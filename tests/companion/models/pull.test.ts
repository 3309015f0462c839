import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../companion/src/commands/pull.js';
import { HearthError } from '../../../companion/src/errors.js';
import { pullModel, type PullProgress } from '../../../companion/src/models/pull.js';
import { pickProjector, projectorFileName } from '../../../companion/src/models/pull-spec.js';
import { ggufArrayBomb, ggufFile } from '../../helpers/gguf-header.js';
import { closeServer } from '../../helpers/http-server.js';

// ---------------------------------------------------------------- a small Hugging Face

type Behaviour = 'normal' | 'cut-first' | 'lying-length' | 'ignore-range';

interface Hosted {
  content: Buffer;
  behaviour: Behaviour;
  served: number;
}

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

const files = new Map<string, Hosted>(); // key: "owner/repo/path"
const listings = new Map<string, { rfilename: string; size?: number }[]>();
const seen: Seen[] = [];
let server: Server;
let base: string;
let root: string;

/** A GGUF of `size` bytes (a header, then random bytes) at owner/repo/path. */
function host(owner: string, repo: string, path: string, size: number, behaviour: Behaviour = 'normal'): Buffer {
  return hostBytes(owner, repo, path, ggufFile({ 'general.architecture': 'llama' }, size), behaviour);
}

function hostBytes(owner: string, repo: string, path: string, content: Buffer, behaviour: Behaviour = 'normal'): Buffer {
  files.set(`${owner}/${repo}/${path}`, { content, behaviour, served: 0 });
  return content;
}

function list(owner: string, repo: string, names: string[], withSizes = true): void {
  listings.set(
    `${owner}/${repo}`,
    names.map((name) => {
      const file = files.get(`${owner}/${repo}/${name}`);
      return withSizes ? { rfilename: name, size: file?.content.length ?? 10 } : { rfilename: name };
    }),
  );
}

function serveFile(hosted: Hosted, range: string | undefined, response: ServerResponse): void {
  hosted.served++;
  const { content } = hosted;
  // 'lying-length' announces more bytes than it has, sends what it has, then hangs up.
  const lying = hosted.behaviour === 'lying-length';
  const declared = lying ? content.length + 40_000 : content.length;
  const hangUp = () => setTimeout(() => response.socket?.destroy(), 20);
  const match = /^bytes=(\d+)-$/.exec(range ?? '');
  if (match && hosted.behaviour !== 'ignore-range') {
    const start = Number(match[1]);
    if (start >= declared) {
      response.writeHead(416, { 'content-range': `bytes */${declared}` }).end();
      return;
    }
    response.writeHead(206, {
      'content-length': declared - start,
      'content-range': `bytes ${start}-${declared - 1}/${declared}`,
      'accept-ranges': 'bytes',
    });
    if (lying) response.write(content.subarray(start), hangUp);
    else response.end(content.subarray(start));
    return;
  }
  response.writeHead(200, { 'content-length': declared, 'accept-ranges': 'bytes' });
  if (lying) response.write(content, hangUp);
  else if (hosted.behaviour === 'cut-first' && hosted.served === 1) {
    // Send part of the body, then drop the connection.
    response.write(content.subarray(0, Math.floor(content.length * 0.4)), hangUp);
  } else response.end(content);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-pull-'));
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    seen.push({ url: url.pathname + url.search, headers: request.headers });
    const api = /^\/api\/models\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (api) {
      const siblings = listings.get(`${decodeURIComponent(api[1]!)}/${decodeURIComponent(api[2]!)}`);
      if (!siblings) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: api[1], siblings }));
      return;
    }
    const resolve = /^\/([^/]+)\/([^/]+)\/resolve\/main\/(.+)$/.exec(url.pathname);
    if (resolve) {
      // Like huggingface.co: the resolve route redirects to the file store.
      const key = [resolve[1], resolve[2], resolve[3]].map((part) => decodeURIComponent(part!)).join('/');
      if (!files.has(key)) {
        response.writeHead(404).end('Entry not found');
        return;
      }
      response.writeHead(302, { location: `/cdn/${encodeURIComponent(key)}` }).end();
      return;
    }
    const cdn = /^\/cdn\/(.+)$/.exec(url.pathname);
    const direct = /^\/direct\/(.+)$/.exec(url.pathname);
    const key = cdn ? decodeURIComponent(cdn[1]!) : direct ? `direct/x/${decodeURIComponent(direct[1]!)}` : '';
    const hosted = files.get(key);
    if (!hosted) {
      response.writeHead(404).end();
      return;
    }
    serveFile(hosted, request.headers.range, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await closeServer(server);
  await rm(root, { recursive: true, force: true });
});

afterEach(() => {
  seen.length = 0;
  delete process.env.HF_TOKEN;
  delete process.env.HF_ENDPOINT;
});

let counter = 0;
async function freshDir(): Promise<string> {
  const dir = join(root, `models-${++counter}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function closedPort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return address.port;
}

// ---------------------------------------------------------------- choosing the file

describe('pullModel: which file', () => {
  it('picks the Q4_K_M file of a repo, never the projector as the model, and verifies the bytes', async () => {
    host('org', 'Model-GGUF', 'Model-Q2_K.gguf', 20_000);
    const wanted = host('org', 'Model-GGUF', 'Model-Q4_K_M.gguf', 150_000);
    host('org', 'Model-GGUF', 'Model-Q8_0.gguf', 60_000);
    const projector = host('org', 'Model-GGUF', 'mmproj-Model-f16.gguf', 1_000);
    list('org', 'Model-GGUF', ['README.md', 'Model-Q2_K.gguf', 'Model-Q4_K_M.gguf', 'Model-Q8_0.gguf', 'mmproj-Model-f16.gguf']);
    const modelsDir = await freshDir();
    const progress: PullProgress[] = [];
    const result = await pullModel({ spec: 'org/Model-GGUF', modelsDir, endpoint: base, onProgress: (p) => progress.push(p) });
    // The repository's projector comes along, beside the model.
    expect(result).toEqual({ path: join(modelsDir, 'Model-Q4_K_M.gguf'), bytes: wanted.length + projector.length });
    expect((await readFile(result.path)).equals(wanted)).toBe(true);
    expect((await readdir(modelsDir)).sort()).toEqual(['Model-Q4_K_M.gguf', 'mmproj-Model-f16.gguf']);
    expect(progress.at(-1)).toEqual({ file: 'mmproj-Model-f16.gguf', received: projector.length, total: projector.length });
    expect(progress.filter((p) => p.file === 'Model-Q4_K_M.gguf').at(-1)).toEqual({ file: 'Model-Q4_K_M.gguf', received: wanted.length, total: wanted.length });
    const received = progress.filter((p) => p.file === 'Model-Q4_K_M.gguf').map((p) => p.received);
    expect(received).toEqual([...received].sort((a, b) => a - b));
    expect(seen[0]!.url).toMatch(/^\/api\/models\/org\/Model-GGUF/);
    expect(seen.some((request) => request.url === '/org/Model-GGUF/resolve/main/Model-Q4_K_M.gguf')).toBe(true);
  });

  it('chooses the projector to bring along (F16, else the smallest; beside the model first) and names it after the repository', () => {
    const files = [
      { name: 'm-Q4_K_M.gguf', size: 100 },
      { name: 'mmproj-BF16.gguf', size: 30 },
      { name: 'mmproj-F16.gguf', size: 30 },
      { name: 'mmproj-Q8_0.gguf', size: 20 },
      { name: 'sub/m-Q8_0.gguf', size: 200 },
      { name: 'sub/mmproj-F32.gguf', size: 60 },
    ];
    expect(pickProjector(files, 'm-Q4_K_M.gguf')?.name).toBe('mmproj-F16.gguf');
    expect(pickProjector(files, 'sub/m-Q8_0.gguf')?.name).toBe('sub/mmproj-F32.gguf');
    expect(pickProjector(files.slice(1, 2).concat(files.slice(3, 4)), 'x.gguf')?.name).toBe('mmproj-Q8_0.gguf');
    expect(pickProjector([{ name: 'm.gguf', size: 1 }], 'm.gguf')).toBeNull();
    expect(projectorFileName('gemma-3-4b-it-GGUF', 'mmproj-F16.gguf')).toBe('mmproj-gemma-3-4b-it-F16.gguf');
    expect(projectorFileName('gemma-3-4b-it-GGUF', 'mmproj-gemma-3-4b-it-f16.gguf')).toBe('mmproj-gemma-3-4b-it-f16.gguf');
    expect(projectorFileName('Qwen2.5-VL-3B-Instruct-GGUF', 'Qwen2.5-VL-3B-Instruct-mmproj-f16.gguf')).toBe('mmproj-Qwen2.5-VL-3B-Instruct-f16.gguf');
    expect(projectorFileName('Vision', 'mmproj.gguf')).toBe('mmproj-Vision.gguf');
  });

  it('without a Q4_K_M takes the smallest GGUF that is not a projector', async () => {
    host('org', 'NoQ4', 'm-Q8_0.gguf', 30_000);
    const small = host('org', 'NoQ4', 'm-Q3_K_S.gguf', 10_000);
    host('org', 'NoQ4', 'mmproj-f16.gguf', 500);
    list('org', 'NoQ4', ['m-Q8_0.gguf', 'm-Q3_K_S.gguf', 'mmproj-f16.gguf']);
    const result = await pullModel({ spec: 'org/NoQ4', modelsDir: await freshDir(), endpoint: base });
    expect((await readFile(result.path)).equals(small)).toBe(true);
    // with no sizes in the listing, the bits in the name decide
    list('org', 'NoQ4', ['m-Q8_0.gguf', 'm-Q3_K_S.gguf', 'mmproj-f16.gguf'], false);
    const again = await pullModel({ spec: 'org/NoQ4', modelsDir: await freshDir(), endpoint: base });
    expect(again.path.endsWith('m-Q3_K_S.gguf')).toBe(true);
  });

  it('pulls owner/repo:QUANT case-insensitively and lists what exists when the quant does not', async () => {
    host('org', 'Quants', 'x.Q4_K_M.gguf', 1000);
    host('org', 'Quants', 'x.Q4_K_S.gguf', 900);
    const q8 = host('org', 'Quants', 'x.Q8_0.gguf', 2000);
    list('org', 'Quants', ['x.Q4_K_M.gguf', 'x.Q4_K_S.gguf', 'x.Q8_0.gguf']);
    const modelsDir = await freshDir();
    const result = await pullModel({ spec: 'org/Quants:q8_0', modelsDir, endpoint: base });
    expect(result.path).toBe(join(modelsDir, 'x.Q8_0.gguf'));
    expect((await readFile(result.path)).equals(q8)).toBe(true);
    const error = await pullModel({ spec: 'org/Quants:IQ2_XS', modelsDir, endpoint: base }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HearthError);
    expect((error as HearthError).message).toMatch(/no \.gguf file for "IQ2_XS".*x\.Q4_K_M\.gguf/);
  });

  it('pulls owner/repo/path/file.gguf and a full URL', async () => {
    const nested = host('org', 'Files', 'sub/dir/Named File.gguf', 5000);
    const modelsDir = await freshDir();
    const one = await pullModel({ spec: 'org/Files/sub/dir/Named File.gguf', modelsDir, endpoint: base });
    expect(one.path).toBe(join(modelsDir, 'Named File.gguf'));
    expect((await readFile(one.path)).equals(nested)).toBe(true);

    const direct = host('direct', 'x', 'plain.gguf', 7000);
    const two = await pullModel({ spec: `${base}/direct/plain.gguf`, modelsDir, endpoint: 'http://unused.invalid' });
    expect(two).toEqual({ path: join(modelsDir, 'plain.gguf'), bytes: 7000 });
    expect((await readFile(two.path)).equals(direct)).toBe(true);
  });

  it('downloads every part of a split model', async () => {
    const one = host('org', 'Split', 'Q4_K_M/Big-Q4_K_M-00001-of-00002.gguf', 4000);
    const two = host('org', 'Split', 'Q4_K_M/Big-Q4_K_M-00002-of-00002.gguf', 3000);
    list('org', 'Split', ['Q4_K_M/Big-Q4_K_M-00001-of-00002.gguf', 'Q4_K_M/Big-Q4_K_M-00002-of-00002.gguf']);
    const modelsDir = await freshDir();
    const result = await pullModel({ spec: 'org/Split', modelsDir, endpoint: base });
    expect(result).toEqual({ path: join(modelsDir, 'Big-Q4_K_M-00001-of-00002.gguf'), bytes: 7000 });
    expect((await readFile(join(modelsDir, 'Big-Q4_K_M-00002-of-00002.gguf'))).equals(two)).toBe(true);
    expect((await readFile(result.path)).equals(one)).toBe(true);
  });

  it('reports a missing repository and a bad spec as Hearth errors', async () => {
    const missing = await pullModel({ spec: 'org/Nope', modelsDir: await freshDir(), endpoint: base }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(HearthError);
    expect((missing as HearthError).code).toBe('model_not_found');
    expect((missing as Error).message).toMatch(/org\/Nope was not found/);
    const bad = await pullModel({ spec: 'just-a-name', modelsDir: await freshDir(), endpoint: base }).catch((e: unknown) => e);
    expect((bad as HearthError).code).toBe('invalid_request_error');
    expect(seen).toHaveLength(1);
    const noFile = await pullModel({ spec: 'org/Files/missing.gguf', modelsDir: await freshDir(), endpoint: base }).catch((e: unknown) => e);
    expect((noFile as HearthError).code).toBe('model_not_found');
    expect((noFile as Error).message).toBe(`org/Files/missing.gguf was not found on ${new URL(base).host}.`);
  });
});

// ---------------------------------------------------------------- resuming and verifying

describe('pullModel: resume and integrity', () => {
  it('resumes with a Range request after the connection drops mid-body', async () => {
    const content = host('org', 'Flaky', 'flaky-Q4_K_M.gguf', 400_000, 'cut-first');
    const modelsDir = await freshDir();
    const result = await pullModel({ spec: 'org/Flaky/flaky-Q4_K_M.gguf', modelsDir, endpoint: base });
    expect((await readFile(result.path)).equals(content)).toBe(true);
    const downloads = seen.filter((request) => request.url.startsWith('/cdn/'));
    expect(downloads).toHaveLength(2);
    expect(downloads[0]!.headers.range).toBeUndefined();
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(downloads[1]!.headers.range ?? '')?.[1]);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThan(content.length);
    expect(await readdir(modelsDir)).toEqual(['flaky-Q4_K_M.gguf']);
  });

  it('continues a .partial left by an earlier run, and restarts from zero when the server ignores Range', async () => {
    const content = host('org', 'Resume', 'r.gguf', 50_000);
    const modelsDir = await freshDir();
    await writeFile(join(modelsDir, 'r.gguf.partial'), content.subarray(0, 12_345));
    const progress: PullProgress[] = [];
    const result = await pullModel({ spec: 'org/Resume/r.gguf', modelsDir, endpoint: base, onProgress: (p) => progress.push(p) });
    expect((await readFile(result.path)).equals(content)).toBe(true);
    expect(seen.filter((request) => request.url.startsWith('/cdn/')).map((request) => request.headers.range)).toEqual(['bytes=12345-']);
    expect(progress[0]).toEqual({ file: 'r.gguf', received: 12_345, total: 50_000 });

    const other = host('org', 'Resume', 'whole.gguf', 30_000, 'ignore-range');
    await writeFile(join(modelsDir, 'whole.gguf.partial'), randomBytes(10_000));
    const again = await pullModel({ spec: 'org/Resume/whole.gguf', modelsDir, endpoint: base });
    expect((await readFile(again.path)).equals(other)).toBe(true);
  });

  it('rejects a body shorter than its Content-Length and keeps nothing under the final name', async () => {
    host('org', 'Short', 'short.gguf', 100_000, 'lying-length');
    const modelsDir = await freshDir();
    const error = await pullModel({ spec: 'org/Short/short.gguf', modelsDir, endpoint: base }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/short\.gguf .*keeps stopping early/);
    expect((error as Error).message).toMatch(/run the same command again to resume/i);
    expect((error as Error).message).toMatch(/received 100000 of 140000 bytes|connection broke/);
    expect(await readdir(modelsDir)).toEqual(['short.gguf.partial']);
    const downloads = seen.filter((request) => request.url.startsWith('/cdn/'));
    expect(downloads.map((request) => request.headers.range)).toEqual([undefined, 'bytes=100000-', 'bytes=100000-', 'bytes=100000-']);
  });

  it('does not download a file that is already there', async () => {
    host('org', 'Have', 'have.gguf', 1000);
    const modelsDir = await freshDir();
    await writeFile(join(modelsDir, 'have.gguf'), 'already here');
    const result = await pullModel({ spec: 'org/Have/have.gguf', modelsDir, endpoint: base });
    expect(result).toEqual({ path: join(modelsDir, 'have.gguf'), bytes: 12 });
    // Only the repository's listing was asked for (to look for a projector), no file.
    expect(seen.filter((request) => !request.url.startsWith('/api/'))).toHaveLength(0);
  });

  it('stops on abort and keeps the partial file', async () => {
    host('org', 'Abort', 'abort.gguf', 2_000_000);
    const modelsDir = await freshDir();
    const controller = new AbortController();
    const error = await pullModel({
      spec: 'org/Abort/abort.gguf',
      modelsDir,
      endpoint: base,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.received > 0) controller.abort();
      },
    }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(await readdir(modelsDir)).toEqual(['abort.gguf.partial']);
  });
});

// ---------------------------------------------------------------- what the file holds

describe('pullModel: the header', () => {
  it('refuses a file whose GGUF header cannot be read safely and keeps nothing of it', async () => {
    hostBytes('org', 'Bomb', 'bomb-Q4_K_M.gguf', ggufArrayBomb());
    list('org', 'Bomb', ['bomb-Q4_K_M.gguf']);
    const modelsDir = await freshDir();
    const error = await pullModel({ spec: 'org/Bomb', modelsDir, endpoint: base }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HearthError);
    expect((error as HearthError).message).toBe(
      'org/Bomb/bomb-Q4_K_M.gguf is not a usable GGUF model file (it says it has 1099511627776 elements in "a"; Hearth reads at most 16777216); ' +
        'Hearth deleted it instead of adding it to the models folder.',
    );
    expect(await readdir(modelsDir)).toEqual([]);

    // A sign-in page served under a .gguf name: refused the same way.
    hostBytes('direct', 'x', 'page.gguf', Buffer.from('<!doctype html><title>Sign in</title>'));
    const page = (await pullModel({ spec: `${base}/direct/page.gguf`, modelsDir, endpoint: base }).catch((e: unknown) => e)) as Error;
    expect(page.message).toMatch(/page\.gguf is not a usable GGUF model file \(it is not a GGUF file \(it does not begin with "GGUF"\)\)/);
    expect(await readdir(modelsDir)).toEqual([]);
  });

  it('checks every part of a split model before it joins the folder', async () => {
    const one = host('org', 'HalfBad', 'H-00001-of-00002.gguf', 4000);
    hostBytes('org', 'HalfBad', 'H-00002-of-00002.gguf', ggufArrayBomb());
    list('org', 'HalfBad', ['H-00001-of-00002.gguf', 'H-00002-of-00002.gguf']);
    const modelsDir = await freshDir();
    const error = (await pullModel({ spec: 'org/HalfBad/H-00001-of-00002.gguf', modelsDir, endpoint: base }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^org\/HalfBad\/H-00002-of-00002\.gguf is not a usable GGUF model file/);
    // The good first part is in the folder; the model stays incomplete (listed as such) until the second part is good.
    expect(await readdir(modelsDir)).toEqual(['H-00001-of-00002.gguf']);
    expect((await readFile(join(modelsDir, 'H-00001-of-00002.gguf'))).equals(one)).toBe(true);
  });
});

// ---------------------------------------------------------------- tokens and offline

describe('pullModel: tokens and offline', () => {
  it('sends HF_TOKEN to the endpoint only, and never shows it', async () => {
    process.env.HF_TOKEN = 'hf_secret_value';
    host('org', 'Gated', 'g.gguf', 1000);
    list('org', 'Gated', ['g.gguf']);
    await pullModel({ spec: 'org/Gated', modelsDir: await freshDir(), endpoint: base });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const request of seen) expect(request.headers.authorization).toBe('Bearer hf_secret_value');

    seen.length = 0;
    host('direct', 'x', 'elsewhere.gguf', 1000);
    await pullModel({ spec: `${base}/direct/elsewhere.gguf`, modelsDir: await freshDir(), endpoint: 'https://huggingface.co' });
    expect(seen[0]!.headers.authorization).toBeUndefined();

    const error = (await pullModel({ spec: 'org/Missing', modelsDir: await freshDir(), endpoint: base }).catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('hf_secret_value');
  });

  it('fails fast with a plain explanation when the port is closed', async () => {
    const port = await closedPort();
    const modelsDir = await freshDir();
    const error = (await pullModel({ spec: 'org/Model-GGUF', modelsDir, endpoint: `http://127.0.0.1:${port}` }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(HearthError);
    expect(error.message).toBe(
      `cannot reach 127.0.0.1:${port} (connection refused). Hearth needs internet for \`hearth pull\`; ` + `alternatively copy a .gguf into ${modelsDir}`,
    );
  });

  it('fails fast when the host name does not resolve', async () => {
    const modelsDir = await freshDir();
    const error = (await pullModel({
      spec: 'org/Model-GGUF',
      modelsDir,
      endpoint: 'http://hearth-pull-test.invalid',
      connectTimeoutMs: 5000,
    }).catch((e: unknown) => e)) as Error;
    expect(error).not.toBeInstanceOf(HearthError);
    expect(error.message).toMatch(/^cannot reach hearth-pull-test\.invalid \(.+\)\. Hearth needs internet for `hearth pull`/);
    expect(error.message).toContain(modelsDir);
  });

  it('gives up on a server that accepts the connection but never answers', async () => {
    const sockets = new Set<Socket>();
    const silent = createTcpServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    try {
      const error = (await pullModel({
        spec: 'org/Model-GGUF',
        modelsDir: await freshDir(),
        endpoint: `http://127.0.0.1:${address.port}`,
        connectTimeoutMs: 300,
      }).catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/^cannot reach 127\.0\.0\.1:\d+ \(no answer within 0\.3 s\)/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

// ---------------------------------------------------------------- the command

class Capture extends Writable {
  text = '';
  constructor(
    readonly isTTY = false,
    readonly columns = 100,
  ) {
    super();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('hearth pull', () => {
  it('prints the path, with a line every 10% when not on a terminal', async () => {
    process.env.HF_ENDPOINT = base;
    host('org', 'Cli', 'cli-Q4_K_M.gguf', 3_000_000);
    list('org', 'Cli', ['cli-Q4_K_M.gguf']);
    const modelsDir = await freshDir();
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await run(['org/Cli'], { modelsDir: join(root, 'unused'), stdout, stderr, env: {} });
    expect(code).toBe(0);
    // --models-dir was not given: context.modelsDir is used
    expect(stdout.text).toBe(`${join(root, 'unused', 'cli-Q4_K_M.gguf')}\n`);
    expect(stderr.text).toMatch(/^cli-Q4_K_M\.gguf: 3\.0 MB\n/);
    expect(stderr.text).toMatch(/100% \(3\.0 of 3\.0 MB, [\d.]+ MB\/s\)\n$/);
    const lines = stderr.text.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(11);
    expect(stderr.text).not.toContain('\r');

    const tty = new Capture(true, 100);
    const again = await run(['pull', 'org/Cli', '--models-dir', modelsDir], { modelsDir: join(root, 'unused'), stdout, stderr: tty, env: {} });
    expect(again).toBe(0);
    expect(tty.text).toContain('\r');
    expect(tty.text).toMatch(/\[#+\] 100% {2}3\.0\/3\.0 MB {2}[\d.]+ MB\/s {2}ETA \d+:\d\d/);
  });

  it('answers usage errors with 2 and failures with 1', async () => {
    const stdout = new Capture();
    const stderr = new Capture();
    const context = { modelsDir: await freshDir(), stdout, stderr, env: {} };
    expect(await run([], context)).toBe(2);
    expect(stderr.text).toContain('missing <spec>');
    expect(await run(['a/b', '--bogus'], context)).toBe(2);
    expect(await run(['a/b', 'c/d'], context)).toBe(2);
    expect(await run(['a/b', '--models-dir'], context)).toBe(2);
    expect(await run(['--help'], context)).toBe(0);
    expect(stdout.text).toContain('Usage: hearth pull');

    process.env.HF_ENDPOINT = `http://127.0.0.1:${await closedPort()}`;
    stderr.text = '';
    expect(await run(['org/Model-GGUF'], context)).toBe(1);
    expect(stderr.text).toMatch(/^hearth pull: cannot reach 127\.0\.0\.1:\d+ \(connection refused\)/);
  });
});
