import type { McpServiceSettings } from '#shared/api/config.js';

const CREDENTIAL_QUERY = /(token|key|secret|password|passwd|auth|sig|credential)/i;

/**
 * Checks the schema cannot express (unique names are checked for every named list in
 * config/document.ts): names that stay distinct as secret names, and no credential in an
 * endpoint's query (tokens go in `auth`, never in a name or URL).
 */
export function checkMcpServices(services: unknown): string[] {
  if (!Array.isArray(services)) return [];
  const problems: string[] = [];
  const secretNames = new Map<string, string>();
  services.forEach((service: Partial<McpServiceSettings>, index) => {
    if (typeof service?.name !== 'string') return;
    const secret = oauthSecretName(service.name);
    const other = secretNames.get(secret);
    if (other !== undefined && other !== service.name)
      problems.push(`mcp_services[${index}].name: "${service.name}" differs from "${other}" only by - and _; choose names that differ otherwise`);
    secretNames.set(secret, service.name);
    if (typeof service.url === 'string') {
      let query: URLSearchParams | undefined;
      try {
        query = new URL(service.url).searchParams;
      } catch {
        problems.push(`mcp_services[${index}].url: is not a valid URL`);
      }
      for (const key of query?.keys() ?? []) {
        if (CREDENTIAL_QUERY.test(key))
          problems.push(
            `mcp_services[${index}].url: the query parameter "${key}" looks like a credential; put tokens in auth (type token or headers) with a secret: reference`,
          );
      }
    }
  });
  return problems;
}

/** The secret under which a service's OAuth sign-in (client registration, tokens) is kept. */
export function oauthSecretName(service: string): string {
  return `MCP_OAUTH_${service.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Settings that only change what callers see, not the connection: changing them needs no reconnect. */
const VIEW_ONLY: (keyof McpServiceSettings)[] = ['expose', 'tool_classes'];

/** Whether two versions of a service's settings need a new connection. */
export function connectionChanged(before: McpServiceSettings, after: McpServiceSettings): boolean {
  const strip = (settings: McpServiceSettings) =>
    JSON.stringify(
      Object.fromEntries(
        Object.entries(settings)
          .filter(([key]) => !VIEW_ONLY.includes(key as keyof McpServiceSettings))
          .sort(([a], [b]) => (a < b ? -1 : 1)),
      ),
    );
  return strip(before) !== strip(after);
}
