/** Whether a socket address is on the loopback interface (IPv4 127/8, ::1, or IPv4-mapped). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

/** The host part of a Host header: `[::1]:4777` -> `::1`, `localhost:80` -> `localhost`. */
export function hostName(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hostHeader);
  if (bracketed) return bracketed[1]!.toLowerCase();
  const colon = hostHeader.lastIndexOf(':');
  return (colon >= 0 && hostHeader.indexOf(':') === colon ? hostHeader.slice(0, colon) : hostHeader).toLowerCase();
}

/** localhost, *.localhost, 127/8, ::1: names that can only mean this machine. */
export function isLoopbackName(name: string | null): boolean {
  if (!name) return false;
  return name === 'localhost' || name.endsWith('.localhost') || isLoopbackAddress(name);
}

export function isLoopbackBind(host: string): boolean {
  return isLoopbackName(host.replace(/^\[|\]$/g, ''));
}

/** The origin a browser page served by this companion (through this Host) has. */
export function ownOrigin(hostHeader: string | undefined): string | null {
  return hostHeader ? `http://${hostHeader.toLowerCase()}` : null;
}

/** Headers a reverse proxy adds; a request carrying any of them did not start on this machine. */
export const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via'] as const;

/** The first proxy header present, or undefined: a proxy connects from loopback, but its client does not. */
export function proxyHeaderOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  return PROXY_HEADERS.find((name) => headers[name] !== undefined);
}

/**
 * The address the app should live at when a page is asked for through another loopback name:
 * `localhost` (or `*.localhost`) becomes the listening address Hearth prints, so conversations
 * (kept per origin) and the sign-in are in one place. Undefined when the request already names
 * it, names something else, or the listener could not be reached at the printed address.
 * `bound` is the listening address (undefined when not listening, as in tests through inject).
 */
export function canonicalAppHost(hostHeader: string | undefined, bound: string | undefined): string | undefined {
  const name = hostName(hostHeader);
  if (!name || !(name === 'localhost' || name.endsWith('.localhost'))) return undefined;
  const port = /:(\d+)$/.exec(hostHeader ?? '')?.[1];
  const printed = bound === undefined || ['127.0.0.1', '0.0.0.0', '::'].includes(bound) ? '127.0.0.1' : bound === '::1' ? '[::1]' : undefined;
  if (!printed) return undefined;
  return port ? `${printed}:${port}` : printed;
}
