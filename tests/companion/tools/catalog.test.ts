import { describe, expect, it } from 'vitest';
import { ToolCatalog, type DiscoveredTool } from '../../../companion/src/tools/catalog.js';
import { exposedUnder, toolClass } from '../../../companion/src/tools/classes.js';
import { assignNames, baseName, MAX_NAME_LENGTH } from '../../../companion/src/tools/names.js';
import { permittedTools } from '../../../companion/src/tools/permitted.js';
import { SchemaCompiler } from '../../../companion/src/tools/schemas.js';
import { checkDocument } from '../../../companion/src/config/document.js';
import type { ConfigDocument, ToolClass } from '#shared/api/config.js';

const compiler = new SchemaCompiler();

function tool(name: string, kind: ToolClass = 'read'): DiscoveredTool {
  const inputSchema = { type: 'object' as const, properties: { q: { type: 'string' } } };
  return { tool: name, description: `${name} tool`, inputSchema, class: kind, validate: compiler.compile(inputSchema) };
}

function config(extra: Record<string, unknown>): ConfigDocument {
  const { document, problems } = checkDocument({ version: 1, ...extra });
  if (!document) throw new Error(problems.join('; '));
  return document;
}

describe('tool classes', () => {
  it('reads the annotations: read-only is read (network when open-world), everything else is write', () => {
    expect(toolClass({ readOnlyHint: true, openWorldHint: false })).toBe('read');
    expect(toolClass({ readOnlyHint: true })).toBe('read');
    expect(toolClass({ readOnlyHint: true, openWorldHint: true })).toBe('network');
    expect(toolClass({ readOnlyHint: false, destructiveHint: false })).toBe('write');
    expect(toolClass({ destructiveHint: true })).toBe('write');
    // MCP's defaults for missing hints are "not read-only, destructive": unannotated is write.
    expect(toolClass(undefined)).toBe('write');
  });

  it('lets tool_classes override the annotations, and only an override makes exec', () => {
    expect(toolClass({ readOnlyHint: true }, 'exec')).toBe('exec');
    expect(toolClass(undefined, 'read')).toBe('read');
  });

  it('exposes read and network under expose read, everything under all, nothing under none', () => {
    expect((['read', 'network', 'write', 'exec'] as const).map((kind) => exposedUnder('read', kind))).toEqual([true, true, false, false]);
    expect((['read', 'network', 'write', 'exec'] as const).map((kind) => exposedUnder('all', kind))).toEqual([true, true, true, true]);
    expect((['read', 'network', 'write', 'exec'] as const).map((kind) => exposedUnder('none', kind))).toEqual([false, false, false, false]);
  });
});

describe('exposed names', () => {
  it('namespaces as <service>_<tool> and makes the name safe', () => {
    expect(baseName('files', 'read_file')).toBe('files_read_file');
    expect(baseName('web', 'fetch.url/v2 (beta)')).toBe('web_fetch_url_v2__beta_');
    const long = baseName('svc', 'x'.repeat(100));
    expect(long).toHaveLength(MAX_NAME_LENGTH);
    expect(long).toMatch(/^svc_x+_[0-9a-f]{6}$/);
  });

  it('resolves collisions deterministically, whatever the order the tools arrive in', () => {
    const a = { service: 'a_b', tool: 'c' };
    const b = { service: 'a', tool: 'b_c' };
    const first = assignNames([a, b], new Set());
    const second = assignNames([b, a], new Set());
    // Ordered by service: "a" < "a_b", so "a"'s tool keeps the plain name.
    expect(first.get(b)).toBe('a_b_c');
    expect(first.get(a)).toMatch(/^a_b_c_[0-9a-f]{6}$/);
    expect(second.get(a)).toBe(first.get(a));
    expect(second.get(b)).toBe(first.get(b));
  });

  it('never gives a protected built-in name to a service tool', () => {
    const request = { service: 'write', tool: 'file' };
    const names = assignNames([request], new Set(['write_file']));
    expect(names.get(request)).not.toBe('write_file');
    expect(names.get(request)).toMatch(/^write_file_[0-9a-f]{6}$/);
  });
});

describe('ToolCatalog', () => {
  it('keeps built-in host-only tools under their protected names', () => {
    const catalog = new ToolCatalog();
    catalog.replaceService('write', [tool('file', 'write')]);
    const builtin = catalog.get('write_file');
    expect(builtin).toMatchObject({ service: null, hostOnly: true, class: 'write' });
    expect(catalog.get('shell')).toMatchObject({ service: null, hostOnly: true, class: 'exec' });
    const serviceTool = catalog.forService('write')[0]!;
    expect(serviceTool.name).not.toBe('write_file');
    expect(serviceTool.hostOnly).toBe(false);
  });

  it('replaces a service catalog as a whole on refresh, and tells listeners', () => {
    const catalog = new ToolCatalog([]);
    let changes = 0;
    catalog.onChange(() => changes++);
    catalog.replaceService('svc', [tool('one'), tool('two')]);
    catalog.replaceService('other', [tool('x')]);
    catalog.replaceService('svc', [tool('three')]);
    expect(catalog.forService('svc').map((entry) => entry.name)).toEqual(['svc_three']);
    expect(catalog.get('svc_one')).toBeUndefined();
    expect(catalog.get('other_x')).toBeDefined();
    catalog.removeService('svc');
    expect(catalog.all().map((entry) => entry.name)).toEqual(['other_x']);
    expect(changes).toBe(4);
  });
});

describe('the catalog an external caller may use', () => {
  const catalog = new ToolCatalog();
  catalog.replaceService('files', [tool('read', 'read'), tool('write', 'write'), tool('run', 'exec')]);
  catalog.replaceService('web', [tool('fetch', 'network')]);
  catalog.replaceService('notes', [tool('add', 'write'), tool('list', 'read')]);
  catalog.replaceService('off', [tool('thing', 'read')]);
  const services = [
    { name: 'files', transport: 'stdio', command: 'x' },
    { name: 'web', transport: 'stdio', command: 'x' },
    { name: 'notes', transport: 'stdio', command: 'x', expose: 'all' },
    { name: 'off', transport: 'stdio', command: 'x', enabled: false },
  ];
  const agents = [
    { id: 'reader', tools: ['files_*', 'notes_add', 'web_fetch'], tool_policy: { write: 'ask', network: 'deny' } },
    { id: 'writer', tools: ['notes_*'], tool_policy: { write: 'ask' } },
  ];
  const document = config({ mcp_services: services, agents });
  const names = (grant: Parameters<typeof permittedTools>[2]) =>
    permittedTools(catalog.all(), document, grant)
      .map((entry) => entry.name)
      .sort();

  it('without a key or with an unscoped key: every enabled service, filtered by its expose; never a built-in', () => {
    const expected = ['files_read', 'notes_add', 'notes_list', 'web_fetch'];
    expect(names(null)).toEqual(expected);
    expect(names({ id: 'key_1', agent: null, scopes: ['tools'] })).toEqual(expected);
    expect(names(null)).not.toContain('shell');
    expect(names(null)).not.toContain('write_file');
  });

  it("with a key scoped to an agent: only the agent's listed tools whose class its policy does not deny", () => {
    // files_write is listed (files_*) but hidden by expose read; web_fetch is denied by network: deny.
    expect(names({ id: 'key_2', agent: 'reader', scopes: ['tools'] })).toEqual(['files_read', 'notes_add']);
    expect(names({ id: 'key_3', agent: 'writer', scopes: ['tools'] })).toEqual(['notes_add', 'notes_list']);
  });

  it('with a key scoped to an agent that does not exist: nothing', () => {
    expect(names({ id: 'key_4', agent: 'ghost', scopes: ['tools'] })).toEqual([]);
  });
});
