/**
 * The load generators' HTTP client: undici's Pool (keep-alive HTTP/1.1 connections, a bounded
 * number per origin, llhttp's parser), behind the small request/response shape the benches
 * read. node:http's request/Agent costs the bench CPU that it takes from the daemon under test
 * on the same machine; undici's is a fraction of it. The wrapper only reads the body as text and
 * shapes the headers: Set-Cookie always an array (RFC 6265 §3: never joined), other repeated
 * fields joined with ", " (RFC 9110 §5.3).
 */
import { Pool } from 'undici';

export interface BenchResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

export interface BenchHttpClientOptions {
  /** Most connections to the origin; requests beyond them queue. */
  maxSockets?: number;
  /** How long to wait for the response head, and then between body chunks. */
  timeoutMs?: number;
}

export class BenchHttpClient {
  readonly #pool: Pool;
  #closed: Promise<void> | undefined;

  /** `origin`: `http://host:port`. */
  constructor(origin: string, opts: BenchHttpClientOptions = {}) {
    const timeout = opts.timeoutMs ?? 30_000;
    this.#pool = new Pool(origin, {
      connections: opts.maxSockets ?? 64,
      // One request at a time per connection, as a browser does.
      pipelining: 1,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
  }

  async request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<BenchResponse> {
    const r = await this.#pool.request({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(r.headers)) {
      if (value === undefined) continue;
      if (name === 'set-cookie') out[name] = Array.isArray(value) ? value : [value];
      else out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { status: r.statusCode, headers: out, body: await r.body.text() };
  }

  /** Closes every connection at once and rejects whatever is outstanding or queued; once. */
  close(): Promise<void> {
    return (this.#closed ??= this.#pool.destroy());
  }
}

/**
 * The last step of a login: the authorization code for tokens (RFC 6749 §4.1.3, with the PKCE
 * verifier of RFC 7636 §4.5), client_secret_basic. Throws unless an ID token comes back.
 */
export async function redeemCode(
  http: BenchHttpClient,
  authorization: string,
  form: { code: string; redirect_uri: string; code_verifier: string },
): Promise<void> {
  const token = await http.request(
    'POST',
    '/token',
    { 'content-type': 'application/x-www-form-urlencoded', authorization },
    new URLSearchParams({ grant_type: 'authorization_code', ...form }).toString(),
  );
  if (token.status !== 200 || !token.body.includes('id_token')) throw new Error(`token ${token.status}`);
}
