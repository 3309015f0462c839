import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** POSTs JSON and resolves with the parsed answer; a non-2xx status throws with the body. */
export function post<T>(url: string, body: unknown): Promise<T> {
  return call<T>('POST', url, JSON.stringify(body));
}

export function get<T>(url: string): Promise<T> {
  return call<T>('GET', url);
}

function call<T>(method: string, url: string, payload?: string): Promise<T> {
  const headers = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, agent, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.on('end', () => {
        if ((response.statusCode ?? 500) >= 300) reject(new Error(`${url} answered ${response.statusCode}: ${text}`));
        else resolve(JSON.parse(text) as T);
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

export function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}
