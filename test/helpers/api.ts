/**
 * The one API-call helper of the tests: a JSON request to the daemon with an optional bearer
 * token, its answer read once (status, headers, the text and the parsed body). Test files name
 * their own short wrappers on top of it (the base URL, a default token) rather than calling
 * fetch and parsing the answer each in their own way.
 */

/**
 * What a test may read of an answer. `body` is the parsed JSON, `{}` when the answer is empty;
 * a test that knows the answer's shape may name it (`api<{ events: Ev[] }>(…)`).
 */
export interface ApiAnswer<T = Record<string, any>> {
  status: number;
  body: T; // by default the test reads the answer's members freely
  text: string;
  headers: Headers;
}

export interface ApiOptions {
  /** Sent as `Authorization: Bearer …` when given (null or undefined: no header). */
  token?: string | null;
  /** Sent as JSON (`content-type: application/json`); undefined: no body. */
  body?: unknown;
  /** Sent as is, with `content-type: application/json` (a malformed body, a body of an exact size). */
  raw?: string;
  /** Sent as `Idempotency-Key`. */
  idempotencyKey?: string;
  /** Added last, so they may replace the ones above (a form post's `content-type`, a Basic `authorization`). */
  headers?: Record<string, string>;
}

export async function api<T = Record<string, any>>(
  baseUrl: string,
  method: string,
  path: string,
  opts: ApiOptions = {},
): Promise<ApiAnswer<T>> {
  const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string> = {
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
    ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
    ...opts.headers,
  };
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : {}) as T,
    text,
    headers: res.headers,
  };
}
