import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { planChange, type PlanContext } from '../../../companion/src/config/plan.js';
import type { ConfigDocument } from '#shared/api/config.js';

function check(services: unknown[]) {
  return checkDocument({ version: 1, mcp_services: services });
}

function problemsOf(services: unknown[]): string[] {
  const { document, problems } = check(services);
  expect(document).toBeUndefined();
  return problems;
}

describe('the mcp_services section', () => {
  it('reads the section as the issue writes it, with defaults filled in', () => {
    const { document, problems } = check([
      {
        name: 'everything',
        transport: 'stdio',
        command: 'node',
        args: ['/path/to/server.js'],
        env: { API_KEY: 'secret:EVERYTHING_KEY' },
        enabled: true,
        auto_connect: true,
        discovery_timeout_ms: 10000,
        tool_call_timeout_ms: 30000,
      },
      { name: 'remote', transport: 'http', url: 'http://127.0.0.1:3001/mcp', auth: { type: 'token', token: 'secret:REMOTE_TOKEN' } },
      { name: 'org', transport: 'http', url: 'https://mcp.example.com/mcp', auth: { type: 'headers', headers: { 'X-Api-Key': 'env:ORG_KEY' } } },
      { name: 'cloud', transport: 'http', url: 'https://mcp.example.com/mcp', auth: { type: 'oauth', scope: 'tools' } },
    ]);
    expect(problems).toEqual([]);
    expect(document!.mcp_services[0]).toEqual({
      name: 'everything',
      transport: 'stdio',
      command: 'node',
      args: ['/path/to/server.js'],
      env: { API_KEY: 'secret:EVERYTHING_KEY' },
      auth: { type: 'none' },
      enabled: true,
      auto_connect: true,
      discovery_timeout_ms: 10000,
      tool_call_timeout_ms: 30000,
      expose: 'read',
      tool_classes: {},
    });
    expect(document!.mcp_services[1]).toMatchObject({ expose: 'read', enabled: true, auto_connect: true, args: [], env: {} });
    expect(checkDocument({ version: 1 }).document!.mcp_services).toEqual([]);
  });

  it('refuses a literal token or header value: secrets are references only', () => {
    const token = problemsOf([{ name: 'remote', transport: 'http', url: 'http://127.0.0.1:3001/mcp', auth: { type: 'token', token: 'sk-live-literal' } }]);
    expect(token.join('\n')).toMatch(/mcp_services\[0\]\.auth\.token: must be secret:NAME or env:NAME/);
    const header = problemsOf([
      { name: 'remote', transport: 'http', url: 'http://127.0.0.1:3001/mcp', auth: { type: 'headers', headers: { 'X-Api-Key': 'literal-value' } } },
    ]);
    expect(header.join('\n')).toMatch(/mcp_services\[0\]\.auth\.headers\.X-Api-Key: must be secret:NAME or env:NAME/);
  });

  it('refuses credentials in the URL (user:password@ or a credential-like query parameter)', () => {
    expect(problemsOf([{ name: 'a', transport: 'http', url: 'http://user:pw@127.0.0.1:1/mcp' }]).join('\n')).toMatch(/mcp_services\[0\]\.url/);
    expect(problemsOf([{ name: 'a', transport: 'http', url: 'http://127.0.0.1:1/mcp?Access_Token=abc' }]).join('\n')).toMatch(
      /query parameter "Access_Token" looks like a credential/,
    );
    expect(check([{ name: 'a', transport: 'http', url: 'http://127.0.0.1:1/mcp?region=eu' }]).problems).toEqual([]);
  });

  it('requires a command for stdio and a URL for http, and refuses unknown keys and bad names', () => {
    expect(problemsOf([{ name: 'a', transport: 'stdio' }]).join('\n')).toMatch(/mcp_services\[0\]\.command: is required/);
    expect(problemsOf([{ name: 'a', transport: 'http' }]).join('\n')).toMatch(/mcp_services\[0\]\.url: is required/);
    expect(problemsOf([{ name: 'a', transport: 'stdio', command: 'x', bogus: 1 }]).join('\n')).toMatch(/mcp_services\[0\]\.bogus: unknown key/);
    expect(problemsOf([{ name: 'Has Space', transport: 'stdio', command: 'x' }]).join('\n')).toMatch(/mcp_services\[0\]\.name/);
    expect(problemsOf([{ name: 'a', transport: 'stdio', command: 'x', expose: 'everything' }]).join('\n')).toMatch(/expose/);
    expect(problemsOf([{ name: 'a', transport: 'stdio', command: 'x', tool_classes: { t: 'admin' } }]).join('\n')).toMatch(/tool_classes/);
  });

  it('refuses duplicate names and names that differ only by - and _', () => {
    expect(
      problemsOf([
        { name: 'a', transport: 'stdio', command: 'x' },
        { name: 'a', transport: 'stdio', command: 'y' },
      ]).join('\n'),
    ).toMatch(/mcp_services\[1\]\.name: "a" is used by an earlier/);
    expect(
      problemsOf([
        { name: 'my-svc', transport: 'stdio', command: 'x' },
        { name: 'my_svc', transport: 'stdio', command: 'y' },
      ]).join('\n'),
    ).toMatch(/differs from "my-svc" only by - and _/);
  });
});

describe('plan: risks of mcp_services changes', () => {
  const current = checkDocument({ version: 1 }).document as ConfigDocument;
  const context: PlanContext = { current, resolves: (reference) => reference === 'secret:SET', localModels: new Set(), activeKeys: 0 };
  const codes = (incoming: Record<string, unknown>, base: ConfigDocument = current) =>
    planChange({ version: 1, ...incoming }, false, { ...context, current: base }).plan?.risks.map((risk) => risk.code);

  it('flags a stdio service (a local command) and expose: all (write tools for external clients) as high-risk', () => {
    expect(codes({ mcp_services: [{ name: 'a', transport: 'stdio', command: 'node' }] })).toEqual(['runs_local_command']);
    expect(codes({ mcp_services: [{ name: 'b', transport: 'http', url: 'http://127.0.0.1:1/mcp', expose: 'all' }] })).toEqual(['exposes_write_tools']);
    const withAll = planChange({ version: 1, mcp_services: [{ name: 'b', transport: 'http', url: 'http://127.0.0.1:1/mcp', expose: 'all' }] }, false, context)
      .plan!.document;
    // Unchanged expose: all is not a new risk; narrowing it is none either.
    expect(codes({ mcp_services: [{ name: 'b', transport: 'http', url: 'http://127.0.0.1:1/mcp', expose: 'all', enabled: false }] }, withAll)).toEqual([]);
    expect(codes({ mcp_services: [{ name: 'b', transport: 'http', url: 'http://127.0.0.1:1/mcp', expose: 'read' }] }, withAll)).toEqual([]);
  });

  it('requires secret references to resolve', () => {
    const result = planChange(
      { version: 1, mcp_services: [{ name: 'r', transport: 'http', url: 'http://127.0.0.1:1/mcp', auth: { type: 'token', token: 'secret:MISSING' } }] },
      false,
      context,
    );
    expect(result.plan).toBeUndefined();
    expect(result.problems).toContainEqual({
      path: 'mcp_services[0].auth.token',
      message: 'the secret MISSING is not set (npm run hearth -- secret set MISSING)',
    });
    expect(
      planChange(
        { version: 1, mcp_services: [{ name: 'r', transport: 'http', url: 'http://127.0.0.1:1/mcp', auth: { type: 'token', token: 'secret:SET' } }] },
        false,
        context,
      ).plan,
    ).toBeDefined();
  });
});
