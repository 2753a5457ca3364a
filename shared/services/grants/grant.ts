/**
 * What a grant is (docs/architecture.md, "Grants and claims"): a named sequence of steps, each
 * one function over the grant's own state, as node-oidc-provider's lib/actions/grants/ has one
 * file per grant type.
 *
 * - `checks` read and refuse, outside any transaction (an ID-JAG issuer's keys may be fetched
 *   here, and nothing is spent yet, so a refused request costs nothing).
 * - `issue` spends, issues and records, in ONE transaction when the grant records anything
 *   (`records`): the token is signed inside it, so a token exists only if its record committed,
 *   and a record only for a token handed out. Signing touches nothing outside the process, so a
 *   transaction retried after a deadlock just signs again. A grant that records nothing for this
 *   request (a plain client_credentials token) runs `issue` on the database without one: an
 *   empty transaction would still take SQLite's write lock.
 * - `done` runs after it committed (a log line); `respond` is the RFC 6749 §5.1 body.
 */
import type { Client } from '../../db/entities.js';
import type { Database, Db } from '../../db/index.js';
import type { TokenService } from '../tokens.js';
import type { TokenParams } from '../../token-params.js';

/** The log lines a grant writes (the request's logger; pino's fits). */
export interface GrantLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

/** A token request once the client is authenticated: who asks, with what parameters. */
export interface TokenRequest {
  client: Client;
  params: TokenParams;
  log: GrantLog;
  /** The request's DPoP proof once checked (RFC 9449 §5): the key the tokens are bound to. */
  dpop?: { jkt: string };
}

/** RFC 6749 §5.1 (and RFC 8693 §2.2.1's `issued_token_type`). */
export interface TokenResponseBody {
  access_token: string;
  /** `N_A` for an issued ID-JAG (RFC 8693 §2.2.1: not an access token); `DPoP` for a bound token (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP' | 'N_A';
  expires_in: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
  issued_token_type?: string;
}

export type Step<S> = (s: S) => Promise<void> | void;
/** A step of the issuing phase: `db` is the grant's transaction (or the database when nothing is recorded). */
export type IssueStep<S> = (s: S, db: Db) => Promise<void> | void;

export interface Grant<S extends TokenRequest> {
  /** The `grant_type` (RFC 6749 §4). */
  type: string;
  checks: Step<S>[];
  issue: IssueStep<S>[];
  /** Whether `issue` writes for this request; default: always. */
  records?: (s: S) => boolean;
  /** After the issuing phase committed (its log line, say). */
  done?: Step<S>[];
  respond: (s: S) => TokenResponseBody;
  /** Called with whatever the steps threw, before it goes to the caller (the code replay's revocation). */
  onError?: (e: unknown, s: S) => Promise<void>;
}

/** Runs the grant's steps in order. */
export async function runGrant<S extends TokenRequest>(
  deps: { ds: Database; tokens: TokenService },
  g: Grant<S>,
  req: TokenRequest,
): Promise<TokenResponseBody> {
  const s = { ...req } as S;
  try {
    for (const step of g.checks) await step(s);
    const run = async (db: Db) => {
      for (const step of g.issue) await step(s, db);
    };
    if (g.records?.(s) ?? true) {
      const { client } = s;
      await deps.tokens.warm(client.access_token_signed_response_alg, client.id_token_signed_response_alg);
      await deps.ds.transaction(run);
    } else await run(deps.ds);
    for (const step of g.done ?? []) await step(s);
  } catch (e) {
    await g.onError?.(e, s);
    throw e;
  }
  return g.respond(s);
}
