/**
 * The sign-in history (docs/directory.md, "Sign-in history"): the sign-in attempts of a tenant
 * or of one of its users, as the authentication history recorded them (auth/history.ts,
 * SIGN_IN_EVENTS), newest first, with keyset pagination over (created_at, id) and a signed
 * opaque cursor (shared/cursor.ts) of its own per reader, so an operator's cursor is not an end
 * user's. Read by the admin API and `iam sign-ins list`, and by the user on the account page.
 */
import { CursorSigner } from '../cursor.js';
import type { Database } from '../db/index.js';
import { notFound } from '../errors.js';
import { TenantRepository, TenantScope, type AuthHistoryRow } from '../repositories/index.js';
import { describeUserAgent } from './auth/account.js';
import { SIGN_IN_EVENTS, SIGN_IN_METHODS, type SignInEvent, type SignInMethodName } from './auth/history.js';

export const SIGN_INS_DEFAULT_LIMIT = 50;
export const SIGN_INS_MAX_LIMIT = 200;

/** One sign-in attempt as the readers see it. Never the code or the assertion. */
export interface SignInView {
  id: string;
  user_id: string | null;
  method: SignInMethodName;
  result: 'success' | 'failure';
  /** Why it failed (a stable code, docs/directory.md); null for a success. */
  reason: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** The user agent as a device name ("Firefox on Linux"), parsed locally. */
  device: string;
  /** Epoch ms. */
  created_at: number;
}

/** The filters of one page. */
export interface SignInQuery {
  userId?: string;
  result?: 'success' | 'failure';
  method?: SignInMethodName;
  clientId?: string;
  ipPrefix?: string;
  since?: number;
  until?: number;
  limit?: number;
  cursor?: string;
}

export interface SignInPage {
  sign_ins: SignInView[];
  /** Present when there may be more: pass it back as `cursor` for the next page. */
  next_cursor?: string;
}

const eventsOf = (method: SignInMethodName | undefined): SignInEvent[] =>
  (Object.keys(SIGN_IN_EVENTS) as SignInEvent[]).filter((e) => method === undefined || SIGN_IN_EVENTS[e] === method);

function view(r: AuthHistoryRow): SignInView {
  return {
    id: r.id,
    user_id: r.user_id,
    method: SIGN_IN_EVENTS[r.event as SignInEvent],
    result: r.outcome,
    reason: r.reason,
    client_id: r.client_id,
    ip: r.ip,
    user_agent: r.user_agent,
    device: describeUserAgent(r.user_agent).display_name,
    created_at: r.created_at,
  };
}

export { SIGN_IN_METHODS };

export class SignInHistoryService {
  private readonly operatorCursors: CursorSigner;
  private readonly ownCursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
  ) {
    this.operatorCursors = new CursorSigner(secretKey, 'sign-ins');
    this.ownCursors = new CursorSigner(secretKey, 'account-sign-ins');
  }

  /**
   * One page of the tenant's sign-ins (or, with `userId`, of one of its users) for an operator:
   * 404 `not_found` when the tenant has no such user, or there is no such tenant; a cursor that
   * is not one of this endpoint's is 400 `invalid_request`.
   */
  async list(tenantId: string, q: SignInQuery): Promise<SignInPage> {
    const scope = new TenantScope(this.db, tenantId);
    if (q.userId !== undefined) {
      if ((await scope.users.status(q.userId)) === undefined) throw notFound(`User ${q.userId}`);
    } else if (!(await new TenantRepository(this.db).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
    return this.page(scope, this.operatorCursors, q);
  }

  /** The user's own recent sign-ins (the account page and GET /api/account/sign-ins). */
  async mine(tenantId: string, userId: string, limit: number, cursor?: string): Promise<SignInPage> {
    return this.page(new TenantScope(this.db, tenantId), this.ownCursors, { userId, limit, cursor });
  }

  private async page(scope: TenantScope, cursors: CursorSigner, q: SignInQuery): Promise<SignInPage> {
    const limit = Math.min(Math.max(q.limit ?? SIGN_INS_DEFAULT_LIMIT, 1), SIGN_INS_MAX_LIMIT);
    // One row more than asked tells whether another page exists without a COUNT.
    const rows = await scope.authHistory.page({
      events: eventsOf(q.method),
      userId: q.userId,
      outcome: q.result,
      clientId: q.clientId,
      ipPrefix: q.ipPrefix,
      since: q.since,
      until: q.until,
      after: q.cursor === undefined ? undefined : cursors.decode(q.cursor),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      sign_ins: page.map(view),
      ...(rows.length > limit && last ? { next_cursor: cursors.encode(last.created_at, last.id) } : {}),
    };
  }
}
