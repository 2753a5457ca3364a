/**
 * A small client for the admin API on Node's fetch. It obtains a bearer token with the
 * client_credentials grant (RFC 6749 §4.4, client_secret_basic §2.3.1) and keeps it in memory
 * only, fetching a new one once when the API answers 401 (the token may have expired). Every
 * request has a timeout; transient failures are retried a few times, which is safe because
 * the only writes sent are conditional and carry an Idempotency-Key. Service errors become
 * CliFailures whose message says what to do next. Neither the secret nor a token is ever put
 * into a message.
 */
import { CliFailure } from '../base.js';
import type { StoredCredentials } from './config.js';
import { operatorApiFetch } from '../../shared/net/outbound.js';

/** A field of a JSON answer as text: strings and numbers as they are, anything else `fallback`. */
function text(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : fallback;
}

export interface TokenInfo {
  scope: string[];
  tenant_id: string | null;
  client_id: string;
}

/** An error answer from the service: the CLI message plus the status and body it came from. */
export class ServiceError extends CliFailure {
  constructor(
    code: string,
    message: string,
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(code, message);
  }
  /** The service's own fields (current values on a 409, and the like) come first. */
  override jsonFields(): Record<string, unknown> {
    const { error: _e, message: _m, error_description: _d, ...rest } = this.body;
    return { status: this.status, ...rest, ...super.jsonFields() };
  }
}

/** A request that got no HTTP answer (refused, reset, timed out). */
export class NetworkFailure extends CliFailure {
  constructor(
    code: string,
    message: string,
    readonly transient: boolean,
  ) {
    super(code, message);
  }
}

const TRANSIENT_STATUS = new Set([502, 503, 504]);
const RETRY_DELAYS_MS = [300, 1000];

/** The payload of a JWT, for display only (tenant and scopes after login); never trusted. */
function jwtClaims(token: string): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

export class AdminClient {
  private access: string | undefined;
  private info: TokenInfo | undefined;
  readonly baseUrl: string;

  constructor(
    private readonly creds: StoredCredentials,
    private readonly timeoutMs = 30_000,
  ) {
    this.baseUrl = creds.url.replace(/\/+$/, '');
  }

  /** Obtains a token (or reuses the cached one) and says what it grants. */
  async token(): Promise<TokenInfo> {
    if (!this.access) await this.fetchToken();
    return this.info!;
  }

  private async fetchToken(): Promise<void> {
    const basic = Buffer.from(
      `${encodeURIComponent(this.creds.client_id)}:${encodeURIComponent(this.creds.client_secret)}`,
    ).toString('base64');
    const res = await this.send('/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${basic}`,
        accept: 'application/json',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
    });
    const body = await readJson(res);
    if (res.status === 401 || body.error === 'invalid_client') {
      throw new ServiceError(
        'invalid_client',
        `the service at ${this.baseUrl} refused client "${this.creds.client_id}" (wrong secret, or the client is ` +
          `disabled or its tenant suspended): ` +
          'run `iam login --url URL --client-id ID` with valid credentials',
        res.status,
        body,
      );
    }
    if (res.status !== 200 || typeof body.access_token !== 'string') {
      throw new ServiceError(
        text(body.error, 'token_failed'),
        `could not obtain an access token from ${this.baseUrl}/token ` +
          `(${res.status} ${text(body.error)}: ${text(body.error_description ?? body.message)}); ` +
          'check that the client has the client_credentials grant',
        res.status,
        body,
      );
    }
    this.access = body.access_token;
    const claims = jwtClaims(body.access_token);
    this.info = {
      client_id: this.creds.client_id,
      scope: text(body.scope ?? claims.scope)
        .split(' ')
        .filter(Boolean),
      tenant_id: typeof claims.tenant_id === 'string' ? claims.tenant_id : null,
    };
  }

  get<T = Record<string, unknown>>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  post<T = Record<string, unknown>>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    return this.call<T>('POST', path, body, idempotencyKey);
  }

  /**
   * One API call with the bearer token. A transient failure (no answer, 502/503/504, or the
   * same Idempotency-Key still in flight) is retried with the same request and key, so a
   * retried write acts at most once.
   */
  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once<T>(method, path, body, idempotencyKey);
      } catch (e) {
        const transient =
          (e instanceof NetworkFailure && e.transient) ||
          (e instanceof ServiceError && (TRANSIENT_STATUS.has(e.status) || e.code === 'idempotency_in_flight'));
        // A POST without a key could act twice: only keyed writes (and reads) are retried.
        if (!transient || attempt >= RETRY_DELAYS_MS.length || (method === 'POST' && !idempotencyKey)) throw e;
        await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt]));
      }
    }
  }

  private async once<T>(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    let renewed = false;
    if (!this.access) await this.fetchToken();
    for (;;) {
      const res = await this.send(path, {
        method,
        headers: {
          authorization: `Bearer ${this.access}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const parsed = await readJson(res);
      if (res.ok) return parsed as T;
      // RFC 6750 §3.1 invalid_token: the cached token may have expired; one fresh token, once.
      if (res.status === 401 && !renewed) {
        renewed = true;
        await this.fetchToken();
        continue;
      }
      throw this.failure(res, parsed);
    }
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await operatorApiFetch(`${this.baseUrl}${path}`, {
        ...init,
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
    } catch (e) {
      throw this.networkFailure(e);
    }
  }

  private networkFailure(e: unknown): NetworkFailure {
    const err = e as Error & { cause?: { code?: string } };
    if (err.name === 'TimeoutError' || err.name === 'AbortError') {
      return new NetworkFailure(
        'timeout',
        `${this.baseUrl} did not answer within ${Math.round(this.timeoutMs / 1000)} s: check the daemon's health ` +
          `(\`curl ${this.baseUrl}/readyz\`) or raise --timeout`,
        true,
      );
    }
    const code = err.cause?.code ?? '';
    if (code === 'ECONNREFUSED') {
      return new NetworkFailure(
        'connection_refused',
        `connection refused by ${this.baseUrl}: is the daemon running at ${this.baseUrl}? (the URL was saved by ` +
          `\`iam login\`; log in again to change it)`,
        true,
      );
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return new NetworkFailure(
        'host_not_found',
        `cannot resolve the host of ${this.baseUrl}: check the URL given to \`iam login\``,
        code === 'EAI_AGAIN',
      );
    }
    if (/CERT|SSL|TLS/.test(code)) {
      return new NetworkFailure(
        'tls_error',
        `TLS failure talking to ${this.baseUrl} (${code}): check the URL and the server certificate`,
        false,
      );
    }
    return new NetworkFailure(
      'network_error',
      `no answer from ${this.baseUrl} (${code || err.message}): check the network and that the daemon is running`,
      true,
    );
  }

  /** The service's error object, turned into what the operator should do next. */
  private failure(res: Response, body: Record<string, unknown>): ServiceError {
    const code = text(body.error, `http_${res.status}`);
    const said = text(body.message ?? body.error_description, res.statusText);
    const who = `client "${this.creds.client_id}"`;
    switch (res.status) {
      case 401:
        return new ServiceError(
          code,
          `the service did not accept the access token of ${who} (${said}): run \`iam login\` again`,
          res.status,
          body,
        );
      case 403: {
        if (code === 'tenant_forbidden') {
          return new ServiceError(
            code,
            `${who} is confined to tenant ${this.info?.tenant_id ?? '(its own)'} and may not act on this one: log ` +
              `in with an iam.platform client, or name the client's own tenant`,
            res.status,
            body,
          );
        }
        const scope =
          /scope="([^"]*)"/
            .exec(res.headers.get('www-authenticate') ?? '')?.[1]
            ?.split(' ')
            .join(' or ') ?? 'another scope';
        return new ServiceError(
          code,
          `${who} lacks the scope this needs: ${scope} (it has: ${this.info?.scope.join(' ') || 'none'}); log in ` +
            `with a client that holds it (\`iam login --client-id ...\`)`,
          res.status,
          body,
        );
      }
      case 409:
        if (code === 'precondition_failed') {
          const current = Object.entries(body)
            .filter(([k]) => !['error', 'message', 'error_description'].includes(k))
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(', ');
          return new ServiceError(
            code,
            `${said} Current values: ${current || 'not given'}. Re-run the command: it reads the current values ` +
              `again and asks before acting`,
            res.status,
            body,
          );
        }
        if (code === 'idempotency_in_flight') {
          return new ServiceError(
            code,
            `${said} Another run with the same idempotency key is still in progress: wait, then re-run with the ` +
              `same --idempotency-key to get its result`,
            res.status,
            body,
          );
        }
        return new ServiceError(code, said, res.status, body);
      case 422:
        if (code === 'idempotency_key_mismatch') {
          return new ServiceError(
            code,
            `${said} The key was already used for a different request: pass a new --idempotency-key (or none, to ` +
              `derive one)`,
            res.status,
            body,
          );
        }
        return new ServiceError(code, said, res.status, body);
      default:
        if (res.status >= 500) {
          const id = body.error_id
            ? ` (error_id ${text(body.error_id)}: quote it when reporting, it is in the daemon's log)`
            : '';
          return new ServiceError(
            code,
            `the service failed (${res.status})${id}; re-running with the same --idempotency-key is safe`,
            res.status,
            body,
          );
        }
        return new ServiceError(code, said, res.status, body);
    }
  }
}

async function readJson(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { message: text.slice(0, 200) };
  }
}
