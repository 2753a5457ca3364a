/**
 * The end user's own view of their grants and sign-ins: consents they gave (and their
 * withdrawal) and the devices (browser sessions) signed in to their account. Every query is
 * scoped by tenant AND user, so an id of another user's row is simply not found.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { DataSource } from 'typeorm';
import UAParser from 'ua-parser-js';
import { deriveKey } from '../../crypto.js';
import { all, exec, json, num, one } from '../../db/sql.js';

export interface ConsentView {
  id: string;
  clientId: string;
  clientName?: string;
  scopes: string[];
  selectedScopes: string[];
  grantedAt: number;
  expiresAt?: number;
  policyVersions?: { privacyPolicyVersion?: string; tosVersion?: string; consentVersion: number };
}

export interface DeviceView {
  id: string;
  display_name: string;
  fallback_display_name?: string;
  platform: string;
  current: boolean;
  last_seen_at?: string;
  last_seen_at_unix?: number;
  client_id?: string;
  app_display_name?: string;
}

/** Raised for a cursor that does not verify or does not parse. */
export class BadCursor extends Error {}

/** The device id of a session: derived one-way, so it does not reveal the session key. */
export function deviceIdOf(sessionId: string): string {
  return createHash('sha256')
    .update('device:' + sessionId)
    .digest('base64url')
    .slice(0, 22);
}

export function describeUserAgent(ua: string | null): {
  display_name: string;
  fallback_display_name: string;
  platform: string;
} {
  const r = new UAParser(ua ?? '').getResult();
  const browser = r.browser.name;
  // ua-parser-js 1.x (MIT) still says "Mac OS" where 2.x (AGPL, not shippable here) says
  // "macOS"; the name users see stays the current one.
  const os = r.os.name === 'Mac OS' ? 'macOS' : r.os.name;
  const platform = os ?? 'unknown';
  const display_name =
    browser && os ? `${browser} on ${os}` : (browser ?? (os ? `Browser on ${os}` : 'Unknown device'));
  return { display_name, fallback_display_name: os ? `Device on ${os}` : 'Unknown device', platform };
}

export class AccountService {
  private readonly cursorKey: Buffer;

  constructor(
    private readonly ds: DataSource,
    secretKey: string,
  ) {
    this.cursorKey = deriveKey(secretKey, 'device-cursor');
  }

  // ---- consents ----

  async listConsents(tenantId: string, userId: string): Promise<ConsentView[]> {
    const now = Date.now();
    const rows = await all<Record<string, unknown>>(
      this.ds,
      `SELECT c.id, c.client_id, c.scopes, c.granted_at, c.expires_at, c.privacy_policy_version, c.tos_version, c.consent_version, cl.name AS client_name
         FROM consents c LEFT JOIN clients cl ON cl.tenant_id = c.tenant_id AND cl.client_id = c.client_id
        WHERE c.tenant_id = ? AND c.user_id = ? AND c.revoked_at IS NULL
        ORDER BY c.granted_at DESC, c.id`,
      [tenantId, userId],
    );
    const out: ConsentView[] = [];
    for (const r of rows) {
      const expiresAt = r.expires_at === null || r.expires_at === undefined ? undefined : num(r.expires_at);
      if (expiresAt !== undefined && expiresAt <= now) continue;
      const scopes = json<string[]>(r.scopes);
      const v: ConsentView = {
        id: String(r.id),
        clientId: String(r.client_id),
        scopes,
        selectedScopes: [...scopes],
        grantedAt: num(r.granted_at),
      };
      if (typeof r.client_name === 'string' && r.client_name) v.clientName = r.client_name;
      if (expiresAt !== undefined) v.expiresAt = expiresAt;
      const pp = r.privacy_policy_version as string | null;
      const tos = r.tos_version as string | null;
      if (pp || tos) {
        v.policyVersions = {
          ...(pp ? { privacyPolicyVersion: pp } : {}),
          ...(tos ? { tosVersion: tos } : {}),
          consentVersion: num(r.consent_version),
        };
      }
      out.push(v);
    }
    return out;
  }

  /**
   * Withdraws a consent and revokes every token family granted under it, plus every family of
   * that user at that client. False when the consent is not this user's (or not live).
   */
  async withdrawConsent(tenantId: string, userId: string, consentId: string): Promise<boolean> {
    return this.ds.transaction(async (em) => {
      const c = await one<{ client_id: string }>(
        em,
        'SELECT client_id FROM consents WHERE id = ? AND tenant_id = ? AND user_id = ? AND revoked_at IS NULL',
        [consentId, tenantId, userId],
      );
      if (!c) return false;
      const now = Date.now();
      await exec(
        em,
        'UPDATE consents SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND user_id = ? AND revoked_at IS NULL',
        [now, consentId, tenantId, userId],
      );
      await exec(
        em,
        `UPDATE token_families SET revoked_at = ?, revoked_reason = ?
          WHERE tenant_id = ? AND user_id = ? AND (consent_id = ? OR client_id = ?) AND revoked_at IS NULL`,
        [now, 'consent_withdrawn', tenantId, userId, consentId, c.client_id],
      );
      return true;
    });
  }

  // ---- devices ----

  private sign(payload: string): string {
    return createHmac('sha256', this.cursorKey).update(payload).digest('base64url');
  }

  encodeCursor(createdAt: number, id: string): string {
    const payload = Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decodeCursor(cursor: string): { createdAt: number; id: string } {
    const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/.exec(cursor);
    if (!m) throw new BadCursor();
    const a = Buffer.from(this.sign(m[1]));
    const b = Buffer.from(m[2]);
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw new BadCursor();
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
    } catch {
      throw new BadCursor();
    }
    if (!Array.isArray(v) || v.length !== 2 || !Number.isSafeInteger(v[0]) || typeof v[1] !== 'string')
      throw new BadCursor();
    return { createdAt: v[0] as number, id: v[1] };
  }

  /** One page of the user's live sessions, newest first (created_at desc, id asc). */
  async listDevices(
    tenantId: string,
    userId: string,
    currentSessionId: string,
    limit: number,
    cursor?: string,
  ): Promise<{ devices: DeviceView[]; next_cursor?: string }> {
    const after = cursor === undefined ? undefined : this.decodeCursor(cursor);
    const now = Date.now();
    const params: unknown[] = [tenantId, userId, now];
    let where = 's.tenant_id = ? AND s.user_id = ? AND s.revoked_at IS NULL AND s.expires_at > ?';
    if (after) {
      where += ' AND (s.created_at < ? OR (s.created_at = ? AND s.id > ?))';
      params.push(after.createdAt, after.createdAt, after.id);
    }
    const rows = await all<Record<string, unknown>>(
      this.ds,
      `SELECT s.id, s.created_at, s.user_agent, s.last_seen_at FROM sessions s WHERE ${where} ORDER BY s.created_at DESC, s.id ASC LIMIT ${limit + 1}`,
      params,
    );
    const page = rows.slice(0, limit);
    const apps = new Map<string, { client_id: string; name: string | null }>();
    if (page.length) {
      const ids = page.map((r) => String(r.id));
      const fams = await all<Record<string, unknown>>(
        this.ds,
        `SELECT f.session_id, f.client_id, f.created_at, cl.name FROM token_families f
           LEFT JOIN clients cl ON cl.tenant_id = f.tenant_id AND cl.client_id = f.client_id
          WHERE f.tenant_id = ? AND f.user_id = ? AND f.session_id IN (${ids.map(() => '?').join(', ')})
          ORDER BY f.created_at ASC`,
        [tenantId, userId, ...ids],
      );
      for (const f of fams)
        apps.set(String(f.session_id), { client_id: String(f.client_id), name: (f.name as string | null) ?? null });
    }
    const devices = page.map((r): DeviceView => {
      const id = String(r.id);
      const d = describeUserAgent((r.user_agent as string | null) ?? null);
      const lastSeen = num(r.last_seen_at);
      const v: DeviceView = { id: deviceIdOf(id), ...d, current: id === currentSessionId };
      if (Number.isFinite(lastSeen)) {
        v.last_seen_at = new Date(lastSeen).toISOString();
        v.last_seen_at_unix = Math.floor(lastSeen / 1000);
      }
      const app = apps.get(id);
      if (app) {
        v.client_id = app.client_id;
        if (app.name) v.app_display_name = app.name;
      }
      return v;
    });
    const last = page[page.length - 1];
    return {
      devices,
      ...(rows.length > limit && last ? { next_cursor: this.encodeCursor(num(last.created_at), String(last.id)) } : {}),
    };
  }

  /** The session id behind a device id, among the user's live sessions. */
  async findDeviceSession(tenantId: string, userId: string, deviceId: string): Promise<string | undefined> {
    const rows = await all<{ id: string }>(
      this.ds,
      'SELECT id FROM sessions WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?',
      [tenantId, userId, Date.now()],
    );
    return rows.map((r) => String(r.id)).find((id) => deviceIdOf(id) === deviceId);
  }
}
