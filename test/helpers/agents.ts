/** Agent grants and agent-write metadata over HTTP, and a tenant set up for them. */
import { randomBytes } from 'node:crypto';
import { clientCredentialsToken, openServices } from './seed.js';
import { sql } from './oauth.js';
import { tokenHash } from '../../shared/services/auth/pkce.js';
import type { ApiAnswer } from './api.js';

export interface AgentSetup {
  agent: { clientId: string; secret: string };
  machine: { clientId: string; secret: string };
  grantor: string;
  delegator: string;
}

/** An agent client (client_credentials), a machine-principal client and two users. */
export async function agentSetup(url: string, dir: string, tenantId: string): Promise<AgentSetup> {
  const { ds, directory } = await openServices(url, dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const agent = await directory.createClient(
      tenantId,
      { name: 'agent', grant_types: ['client_credentials'], scopes: ['tools'] },
      actor,
    );
    const machine = await directory.createClient(
      tenantId,
      { name: 'machine', grant_types: ['client_credentials'], scopes: ['tools'] },
      actor,
    );
    const grantor = await directory.createUser(tenantId, { email: `g-${Date.now()}@example.test`, name: 'G' }, actor);
    const delegator = await directory.createUser(tenantId, { email: `d-${Date.now()}@example.test`, name: 'D' }, actor);
    return {
      agent: { clientId: agent.client.client_id, secret: agent.client_secret! },
      machine: { clientId: machine.client.client_id, secret: machine.client_secret! },
      grantor: grantor.id,
      delegator: delegator.id,
    };
  } finally {
    await ds.destroy();
  }
}

export const DAY = 24 * 3600 * 1000;

/** A grant body within every ceiling: `docs` read/write; ceilings allow `docs` and `mail`. */
export function grantBody(s: AgentSetup, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: s.agent.clientId,
    grantor_user_id: s.grantor,
    delegator_user_id: s.delegator,
    machine_principal_id: s.machine.clientId,
    authorization_details: [{ type: 'docs', actions: ['read'] }],
    purpose: 'summarise documents',
    expires_at: Date.now() + 30 * DAY,
    task_set: ['summarise'],
    scope_policy: { mode: 'least' },
    resolved_tools: ['docs.search'],
    permissions: ['docs:read'],
    scopes: ['tools'],
    ceilings: {
      updater: { docs: ['*'], mail: ['*'], calendar: ['read'] },
      grantor: { docs: ['read', 'write'], mail: ['send'], calendar: ['read'] },
      delegator: { docs: ['read', 'write'], mail: ['send', 'read'], calendar: ['read'] },
      machine_principal: { docs: ['read', 'write'], mail: ['send'] },
    },
    ...extra,
  };
}

/** A client_credentials token bound to an agent grant, or the error answer. */
export async function agentToken(
  baseUrl: string,
  agent: { clientId: string; secret: string },
  grantId: string,
): Promise<Omit<ApiAnswer, 'text'>> {
  const res = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'Basic ' +
        Buffer.from(`${encodeURIComponent(agent.clientId)}:${encodeURIComponent(agent.secret)}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', agent_grant_id: grantId }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

export { clientCredentialsToken };

/**
 * A live browser session of `userId` (as signing in makes one), written directly: the
 * `Cookie` header value that carries it. For the account surface (the grantor's consent).
 */
export async function sessionCookie(url: string, dir: string, tenantId: string, userId: string): Promise<string> {
  const cookie = randomBytes(24).toString('base64url');
  const now = Date.now();
  await sql(
    url,
    dir,
    'INSERT INTO sessions (id, tenant_id, user_id, created_at, expires_at, auth_time, acr, amr, user_agent, ip, ' +
      'last_seen_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [tokenHash(cookie), tenantId, userId, now, now + 3_600_000, now, '1', '["otp"]', 'test', '127.0.0.1', now, null],
  );
  return `service_session=${cookie}`;
}
