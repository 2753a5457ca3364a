/**
 * The end user's own view of their grants and sign-ins: consents they gave (and their
 * withdrawal) and the devices (browser sessions) signed in to their account. Every query is
 * scoped by tenant AND user, so an id of another user's row is simply not found.
 */
import { createHash } from 'node:crypto';
import UAParser from 'ua-parser-js';
import { CursorSigner } from '../../cursor.js';
import type { Database } from '../../db/index.js';
import type { Client } from '../../db/entities.js';
import { TenantScope } from '../../repositories/index.js';
import { ensureAccountConsoleClient } from './account-console.js';

export interface ConsentView {
  id: string;
  clientId: string;
  clientName?: string;
  clientLogoUri?: string;
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

/** A device as the account page shows it (times in epoch milliseconds). */
export interface DeviceDetail extends DeviceView {
  browser?: string;
  os?: string;
  first_seen: number;
  last_seen?: number;
  ip?: string;
}

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
  browser?: string;
  os?: string;
} {
  const r = new UAParser(ua ?? '').getResult();
  const browser = r.browser.name;
  // ua-parser-js 1.x (MIT) still says "Mac OS" where 2.x (AGPL, not shippable here) says
  // "macOS"; the name users see stays the current one.
  const os = r.os.name === 'Mac OS' ? 'macOS' : r.os.name;
  const platform = os ?? 'unknown';
  const display_name =
    browser && os ? `${browser} on ${os}` : (browser ?? (os ? `Browser on ${os}` : 'Unknown device'));
  return {
    display_name,
    fallback_display_name: os ? `Device on ${os}` : 'Unknown device',
    platform,
    ...(browser ? { browser } : {}),
    ...(os ? { os } : {}),
  };
}

export class AccountService {
  private readonly cursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
  ) {
    this.cursors = new CursorSigner(secretKey, 'devices');
  }

  /** The tenant's account console client, created on first use (account-console.ts); undefined: no such tenant. */
  consoleClient(tenantId: string, issuer: string): Promise<Client | undefined> {
    return ensureAccountConsoleClient(this.db, tenantId, issuer);
  }

  // ---- consents ----

  /**
   * The user's live consents; with `onlyClientId`, only that client's (what a token without the
   * account scope sees: its own client's consent, docs/scopes.md).
   */
  async listConsents(tenantId: string, userId: string, onlyClientId?: string): Promise<ConsentView[]> {
    const now = Date.now();
    const rows = await new TenantScope(this.db, tenantId).consents.listWithClientNames(userId);
    const out: ConsentView[] = [];
    for (const r of rows) {
      if (onlyClientId !== undefined && r.client_id !== onlyClientId) continue;
      const expiresAt = r.expires_at ?? undefined;
      if (expiresAt !== undefined && expiresAt <= now) continue;
      const v: ConsentView = {
        id: r.id,
        clientId: r.client_id,
        scopes: r.scopes,
        selectedScopes: [...r.scopes],
        grantedAt: r.granted_at,
      };
      if (r.client_name) v.clientName = r.client_name;
      if (r.client_logo_uri) v.clientLogoUri = r.client_logo_uri;
      if (expiresAt !== undefined) v.expiresAt = expiresAt;
      const pp = r.privacy_policy_version;
      const tos = r.tos_version;
      if (pp || tos) {
        v.policyVersions = {
          ...(pp ? { privacyPolicyVersion: pp } : {}),
          ...(tos ? { tosVersion: tos } : {}),
          consentVersion: r.consent_version,
        };
      }
      out.push(v);
    }
    return out;
  }

  /**
   * Withdraws a consent and revokes every token family granted under it, plus every family of
   * that user at that client. False when the consent is not this user's (or not live), and,
   * with `onlyClientId`, when it is another client's: nothing is withdrawn then.
   */
  async withdrawConsent(tenantId: string, userId: string, consentId: string, onlyClientId?: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const clientId = await scope.consents.liveClientOf(userId, consentId);
      if (clientId === undefined) return false;
      if (onlyClientId !== undefined && clientId !== onlyClientId) return false;
      const now = Date.now();
      await scope.consents.withdraw(userId, consentId, now);
      await scope.tokens.revokeFamiliesOfConsent(userId, { id: consentId, clientId }, 'consent_withdrawn', now);
      return true;
    });
  }

  // ---- devices ----

  /** One page of the user's live sessions, newest first (created_at desc, id asc). */
  async listDevices(
    tenantId: string,
    userId: string,
    currentSessionId: string,
    limit: number,
    cursor?: string,
  ): Promise<{ devices: DeviceView[]; next_cursor?: string }> {
    const { devices, next_cursor } = await this.devicePage(tenantId, userId, currentSessionId, limit, cursor);
    return { devices: devices.map((d) => d.view), ...(next_cursor ? { next_cursor } : {}) };
  }

  /**
   * The account page's devices: the API's record plus what tells two devices apart on the page
   * (browser and OS apart, so the page can word them in its language; when the session began;
   * the address it signed in from). Not part of the API's Device record (its fields are fixed).
   */
  async deviceDetails(
    tenantId: string,
    userId: string,
    currentSessionId: string,
    limit: number,
  ): Promise<DeviceDetail[]> {
    return (await this.devicePage(tenantId, userId, currentSessionId, limit)).devices.map((d) => d.detail);
  }

  private async devicePage(
    tenantId: string,
    userId: string,
    currentSessionId: string,
    limit: number,
    cursor?: string,
  ): Promise<{ devices: { view: DeviceView; detail: DeviceDetail }[]; next_cursor?: string }> {
    const after = cursor === undefined ? undefined : this.cursors.decode(cursor);
    const scope = new TenantScope(this.db, tenantId);
    const rows = await scope.sessions.listLive(userId, Date.now(), limit + 1, after);
    const page = rows.slice(0, limit);
    const apps = new Map<string, { client_id: string; name: string | null }>();
    // Oldest first, so a session's latest application is the one that stays in the map.
    for (const f of await scope.tokens.appsOfSessions(
      userId,
      page.map((r) => r.id),
    ))
      apps.set(f.session_id, { client_id: f.client_id, name: f.name });
    const devices = page.map((r) => {
      const d = describeUserAgent(r.user_agent);
      const v: DeviceView = {
        id: deviceIdOf(r.id),
        display_name: d.display_name,
        fallback_display_name: d.fallback_display_name,
        platform: d.platform,
        current: r.id === currentSessionId,
      };
      if (Number.isFinite(r.last_seen_at)) {
        v.last_seen_at = new Date(r.last_seen_at).toISOString();
        v.last_seen_at_unix = Math.floor(r.last_seen_at / 1000);
      }
      const app = apps.get(r.id);
      if (app) {
        v.client_id = app.client_id;
        if (app.name) v.app_display_name = app.name;
      }
      const detail: DeviceDetail = { ...v, first_seen: r.created_at };
      if (Number.isFinite(r.last_seen_at)) detail.last_seen = r.last_seen_at;
      if (d.browser) detail.browser = d.browser;
      if (d.os) detail.os = d.os;
      if (r.ip) detail.ip = r.ip;
      return { view: v, detail };
    });
    const last = page[page.length - 1];
    return {
      devices,
      ...(rows.length > limit && last ? { next_cursor: this.cursors.encode(last.created_at, last.id) } : {}),
    };
  }

  /** The session id behind a device id, among the user's live sessions. */
  async findDeviceSession(tenantId: string, userId: string, deviceId: string): Promise<string | undefined> {
    const ids = await new TenantScope(this.db, tenantId).sessions.liveIds(userId, Date.now());
    return ids.find((id) => deviceIdOf(id) === deviceId);
  }
}
