/**
 * Remote `http(s)` image URLs in chat requests, fetched for a local model's projector. Off unless
 * `models.remote_images.enabled`: a server that fetches any URL a key holder names is a way into
 * the owner's network. When on, a URL's host must resolve to public addresses only (never
 * loopback, private, link-local, carrier-grade NAT, multicast or unspecified ones), checked at the
 * connection itself (the socket connects to the address that was checked, so a name that changes
 * its answer between check and connect gains nothing), at every redirect. A host the owner names
 * in `models.remote_images.allowed_hosts` (`host` or `host:port`) is fetched wherever it is.
 * Bounded: MAX_IMAGE_BYTES, FETCH_SECONDS for the whole fetch, MAX_REDIRECTS.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { get as httpGet, type IncomingMessage, type RequestOptions } from 'node:http';
import { get as httpsGet } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { RemoteImageSettings } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import { MAX_IMAGE_BYTES } from './image-limits.js';

export const FETCH_SECONDS = 10;
export const MAX_REDIRECTS = 3;

/** Addresses a fetched URL may not reach unless its host is named in allowed_hosts. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an address is one a fetch may reach: public, IPv4-mapped IPv6 judged as the IPv4 it holds. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return !NOT_PUBLIC.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

/** A DNS lookup that answers only public addresses, so the connection goes where the check looked. */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${refused.address}`), { code: 'HEARTH_NOT_PUBLIC' }), '', 0);
    if ((options as { all?: boolean }).all) return (callback as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

function named(url: URL, settings: RemoteImageSettings): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return settings.allowed_hosts.some((entry) => {
    const wanted = entry.toLowerCase();
    return wanted === host || wanted === `${host}:${port}` || wanted === `[${host}]:${port}`;
  });
}

function request(url: URL, options: RequestOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const call = (url.protocol === 'https:' ? httpsGet : httpGet)(url, options, resolve);
    call.on('error', reject);
  });
}

async function body(response: IncomingMessage, param: string): Promise<Buffer> {
  const declared = Number(response.headers['content-length'] ?? 0);
  if (declared > MAX_IMAGE_BYTES) {
    response.destroy();
    refuse(param, `${param} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB (${declared} bytes). Send a smaller image.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_IMAGE_BYTES) {
      response.destroy();
      refuse(param, `${param} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB. Send a smaller image.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The bytes of the image at `address` (an http or https URL), or a 400 naming `param` that says why not. */
export async function fetchImage(
  address: string,
  param: string,
  settings: RemoteImageSettings,
  options: { signal?: AbortSignal; seconds?: number } = {},
): Promise<Buffer> {
  const { signal, seconds = FETCH_SECONDS } = options;
  if (!settings.enabled)
    refuse(
      param,
      `${param} is a remote URL, and fetching remote images is off (models.remote_images.enabled). Send the image itself as a data URL (data:image/png;base64,...), or ask the owner to turn it on.`,
    );
  const timeout = AbortSignal.timeout(seconds * 1000);
  const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let url = new URL(address);
  for (let redirects = 0; ; redirects++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      refuse(param, `${param} leads to a ${url.protocol} URL: only http and https images are fetched.`);
    const trusted = named(url, settings);
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!trusted && isIP(literal) && !isPublicAddress(literal))
      refuse(
        param,
        `${param} leads to ${literal}, a loopback, private or link-local address, which remote images never reach (models.remote_images.allowed_hosts names exceptions).`,
      );
    let response: IncomingMessage;
    try {
      response = await request(url, { signal: stop, ...(trusted ? {} : { lookup: publicLookup }), headers: { accept: 'image/*' } });
    } catch (error) {
      if (timeout.aborted) refuse(param, `${param} did not arrive within ${seconds} s.`);
      if ((error as { code?: string }).code === 'HEARTH_NOT_PUBLIC')
        refuse(
          param,
          `${param} leads to ${url.hostname}, which resolves to a loopback, private or link-local address; remote images never reach those (models.remote_images.allowed_hosts names exceptions).`,
        );
      refuse(param, `${param} could not be fetched: ${error instanceof Error ? error.message : String(error)}.`);
    }
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (redirects >= MAX_REDIRECTS) refuse(param, `${param} redirects more than ${MAX_REDIRECTS} times.`);
      url = new URL(response.headers.location, url);
      continue;
    }
    if (status !== 200) {
      response.resume();
      refuse(param, `${param} could not be fetched: its server answered ${status}.`);
    }
    try {
      return await body(response, param);
    } catch (error) {
      if (error instanceof HearthError) throw error;
      if (timeout.aborted) refuse(param, `${param} did not arrive within ${seconds} s.`);
      throw error;
    }
  }
}
