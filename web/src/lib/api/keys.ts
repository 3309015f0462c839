import type { AccessKeyRecord, CreatedKey, CreateKeyRequest } from '#shared/api/access.js';
import { request } from './client';

/* Access keys (loopback-only admin routes): the Server screen creates, lists and revokes them. */

export async function listKeys(): Promise<AccessKeyRecord[]> {
  return (await request<{ data: AccessKeyRecord[] }>('/admin/keys', { cache: 'no-store' })).data;
}

/** The created key carries `key`, which the companion shows this once. */
export function createKey(body: CreateKeyRequest): Promise<CreatedKey> {
  return request<CreatedKey>('/admin/keys', { method: 'POST', body: JSON.stringify(body), cache: 'no-store' });
}

export function revokeKey(id: string): Promise<AccessKeyRecord> {
  return request<AccessKeyRecord>(`/admin/keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
}
