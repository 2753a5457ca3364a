/**
 * RFC 8693 token exchange requests and the tenant settings endpoint, over HTTP.
 */
import { decodeJwt, type JWTPayload } from 'jose';

export const TE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const AT = 'urn:ietf:params:oauth:token-type:access_token';
export const IDT = 'urn:ietf:params:oauth:token-type:id_token';
export const JAG = 'urn:ietf:params:oauth:token-type:id-jag';

export interface Caller {
  clientId: string;
  secret?: string;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** POST /token with grant_type token-exchange; array values repeat the parameter. */
export async function exchange(
  baseUrl: string,
  caller: Caller,
  params: Record<string, string | string[] | undefined>,
): Promise<Answer> {
  const form = new URLSearchParams({ grant_type: TE_GRANT });
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const one of ([] as string[]).concat(v)) form.append(k, one);
  }
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (caller.secret)
    headers.authorization =
      'Basic ' +
      Buffer.from(`${encodeURIComponent(caller.clientId)}:${encodeURIComponent(caller.secret)}`).toString('base64');
  else form.append('client_id', caller.clientId);
  const res = await fetch(`${baseUrl}/token`, { method: 'POST', headers, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function settingsCall(
  baseUrl: string,
  method: 'GET' | 'PUT',
  token: string | undefined,
  body?: unknown,
  tenantId?: string,
): Promise<Answer & { headers: Headers }> {
  const res = await fetch(
    `${baseUrl}/api/admin/settings/token-exchange${tenantId ? `?tenant_id=${encodeURIComponent(tenantId)}` : ''}`,
    {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    },
  );
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** PUT that must succeed; returns the stored settings. */
export async function putSettings(
  baseUrl: string,
  token: string,
  body: unknown,
  tenantId?: string,
): Promise<Record<string, unknown>> {
  const r = await settingsCall(baseUrl, 'PUT', token, body, tenantId);
  if (r.status !== 200) throw new Error(`PUT token-exchange settings: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.settings as Record<string, unknown>;
}

export const claimsOf = (token: unknown): JWTPayload => decodeJwt(String(token));
