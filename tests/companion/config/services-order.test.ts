import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it, vi } from 'vitest';
import type { ConfigDocument } from '#shared/api/config.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { createServices, Parts, type Services } from '../../../companion/src/services.js';
import { dataPaths } from '../../../companion/src/store/data-dir.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * services.ts builds the companion's parts in one ordered list: each part is built from parts
 * built before it, reconfigured and started in that order, and closed in the reverse order.
 */

describe('Parts', () => {
  it('configures and starts in the order built, and closes in the reverse order, once', async () => {
    const seen: string[] = [];
    const parts = new Parts();
    for (const name of ['first', 'second', 'third'])
      parts.add(
        name,
        { name },
        {
          configure: (part) => void seen.push(`configure ${part.name}`),
          start: (part) => void seen.push(`start ${part.name}`),
          close: async (part) => void seen.push(`close ${part.name}`),
        },
      );
    parts.configure({} as ConfigDocument);
    parts.start();
    await Promise.all([parts.close(), parts.close()]);
    expect(seen).toEqual([
      'configure first',
      'configure second',
      'configure third',
      'start first',
      'start second',
      'start third',
      'close third',
      'close second',
      'close first',
    ]);
    expect(parts.names()).toEqual(['first', 'second', 'third']);
    expect(() => parts.add('late', {})).toThrow(/after closing began/);
  });

  it('closes every part when one fails to close, and then reports that failure', async () => {
    const closed: string[] = [];
    const parts = new Parts();
    parts.add('a', 'a', { close: () => void closed.push('a') });
    parts.add('b', 'b', {
      close: () => {
        throw new Error('b would not close');
      },
    });
    parts.add('c', 'c', { close: () => void closed.push('c') });
    await expect(parts.close()).rejects.toThrow('b would not close');
    expect(closed).toEqual(['c', 'a']);
  });
});

/** The object and method through which a part of the real services closes, where a test can watch it. */
function closer(services: Services, name: string): { target: object; method: string } | undefined {
  const value = name === 'cloud' ? services.cloud.signIn : (services as unknown as Record<string, unknown>)[name];
  if (typeof value !== 'object' || value === null) return undefined;
  for (const method of ['close', 'stop']) if (typeof (value as Record<string, unknown>)[method] === 'function') return { target: value, method };
  return undefined;
}

describe('createServices', () => {
  it('closes the parts in the reverse order of building them: work stops first, the database and the lock last', async () => {
    const dataDir = await newDataDir(false);
    const services = await createServices({ dataDir, log: silentLogger, version: 'test' });
    const order: string[] = [];
    services.shutdown.addEventListener('abort', () => order.push('shutdown'));
    const watched = ['shutdown'];
    for (const name of services.parts) {
      const found = closer(services, name);
      if (!found) continue;
      const original = (found.target as Record<string, (...args: unknown[]) => unknown>)[found.method]!.bind(found.target);
      vi.spyOn(found.target as Record<string, (...args: unknown[]) => unknown>, found.method).mockImplementation((...args: unknown[]) => {
        order.push(name);
        return original(...args);
      });
      watched.push(name);
    }
    expect(services.parts[0]).toBe('lock');
    expect(services.parts.at(-1)).toBe('shutdown');
    // Every part that closes something is watched: the test would miss nothing that closes.
    for (const name of ['agents', 'media', 'images', 'mcp', 'memory', 'downloads', 'monitor', 'engine', 'pools', 'db', 'pairedHosts', 'cloud'])
      expect(watched).toContain(name);
    await services.close();
    expect(order).toEqual([...services.parts].reverse().filter((name) => watched.includes(name)));
    expect(order.indexOf('agents')).toBeLessThan(order.indexOf('engine'));
    // The lock is released last: the data folder can be opened again.
    const again = await createServices({ dataDir, log: silentLogger, version: 'test' });
    await again.close();
  });

  it('when a part cannot be built, closes the parts built before it and reports the real failure', async () => {
    const dataDir = await newDataDir(false);
    const media = dataPaths(dataDir).media;
    // A file where the media folder goes: the media part (built late) cannot be made.
    writeFileSync(media, 'not a folder');
    const failure = await createServices({ dataDir, log: silentLogger, version: 'test' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(ReferenceError);
    expect((failure as NodeJS.ErrnoException).code).toMatch(/^E/);
    rmSync(media);
    // The lock and the database were closed again: the folder opens.
    const services = await createServices({ dataDir, log: silentLogger, version: 'test' });
    await services.close();
  });

  it('refers to no part before it is built (no getter or closure over a part declared later)', () => {
    const source = readFileSync(new URL('../../../companion/src/services.ts', import.meta.url), 'utf8');
    const messages = new Linter({ configType: 'flat' }).verify(
      source,
      [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: tseslint.parser },
          plugins: { '@typescript-eslint': tseslint.plugin },
          rules: {
            '@typescript-eslint/no-use-before-define': [
              'error',
              { functions: false, classes: true, variables: true, typedefs: false, ignoreTypeReferences: true },
            ],
          },
        },
      ],
      'services.ts',
    );
    expect(messages.map((message) => `${message.line}: ${message.message}`)).toEqual([]);
  });

  it('gives every part built from a setting value (config() read while building it) a configure hook, so a change reaches it', () => {
    const source = readFileSync(new URL('../../../companion/src/services.ts', import.meta.url), 'utf8');
    type Node = { type: string; [key: string]: unknown };
    const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
    const children = (node: Node): Node[] =>
      Object.entries(node)
        .filter(([key]) => key !== 'parent')
        .flatMap(([, value]) => (Array.isArray(value) ? value.filter(isNode) : isNode(value) ? [value] : []));
    /** Whether `config()` is called in this expression outside any function (that is, while it is evaluated). */
    const readsConfigNow = (node: Node): boolean => {
      if (node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression') return false;
      if (node.type === 'CallExpression' && isNode(node.callee) && node.callee.type === 'Identifier' && node.callee.name === 'config') return true;
      return children(node).some(readsConfigNow);
    };
    const adds: { name: string; readsConfig: boolean; configures: boolean }[] = [];
    const walk = (node: Node): void => {
      const callee = node.callee as Node | undefined;
      if (
        node.type === 'CallExpression' &&
        callee?.type === 'MemberExpression' &&
        (callee.object as Node).name === 'parts' &&
        (callee.property as Node).name === 'add'
      ) {
        const [name, value, hooks] = node.arguments as Node[];
        const properties = hooks?.type === 'ObjectExpression' ? (hooks.properties as Node[]) : [];
        adds.push({
          name: String(name!.value),
          readsConfig: readsConfigNow(value!),
          configures: properties.some((property) => (property.key as Node).name === 'configure'),
        });
      }
      children(node).forEach(walk);
    };
    walk((tseslint.parser as unknown as { parseForESLint(code: string): { ast: unknown } }).parseForESLint(source).ast as Node);
    expect(adds.length).toBeGreaterThan(20);
    expect(adds.filter((part) => part.readsConfig).map((part) => part.name)).toEqual(expect.arrayContaining(['engine', 'catalog', 'mcp']));
    expect(adds.filter((part) => part.readsConfig && !part.configures).map((part) => part.name)).toEqual([]);
  });

  it('has every part of Services in place when it is returned, with accessors only over parts already built', async () => {
    const dataDir = await newDataDir(false);
    const services = await createServices({ dataDir, log: silentLogger, version: 'test' });
    try {
      const descriptors = Object.getOwnPropertyDescriptors(services);
      const accessors = Object.keys(descriptors).filter((name) => descriptors[name]!.get);
      expect(accessors.sort()).toEqual(['config', 'modelsDirs', 'providers']);
      for (const [name, descriptor] of Object.entries(descriptors))
        expect(descriptor.get ? descriptor.get.call(services) : descriptor.value, name).toBeDefined();
    } finally {
      await services.close();
    }
  });
});
