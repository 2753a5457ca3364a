/**
 * A token request's form parameters (RFC 6749 §3.2), read by the grant's steps where the RFC's
 * processing order reads them, so a malformed parameter is refused at the same point as ever
 * (after the grant and the client are checked, say).
 */
import { InvalidRequest } from './errors.js';

/** RFC 6749 §3.3: a space-delimited list; duplicates collapse. */
export function parseScope(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new InvalidRequest('scope must be a single space-delimited string.');
  return [...new Set(raw.split(' ').filter(Boolean))];
}

export class TokenParams {
  constructor(private readonly body: Record<string, unknown>) {}

  /** Parameters must not repeat (RFC 6749 §3.2); the form parser turns a repeated one into an array. */
  single(name: string): string | undefined {
    const v = this.body[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new InvalidRequest(`${name} must appear once.`);
    return v;
  }

  /**
   * `resource` (RFC 8707 §2) and `audience` (RFC 8693 §2.1) may repeat. The form parser turns a
   * repeated key into an array, and more than 20 repeats into an object keyed 0..n-1.
   */
  multi(name: string): string[] {
    const v = this.body[name];
    if (v === undefined) return [];
    if (typeof v === 'string') return [v];
    const values = Array.isArray(v)
      ? v
      : v && typeof v === 'object' && Object.keys(v).every((k, i) => k === String(i))
        ? Object.values(v)
        : undefined;
    if (!values || !values.every((x) => typeof x === 'string'))
      throw new InvalidRequest(`${name} must be one or more string values.`);
    return values;
  }

  /** The parameter as the form parser left it (a string, an array of them, or absent). */
  raw(name: string): unknown {
    return this.body[name];
  }

  /** `scope` once, parsed (RFC 6749 §3.3). */
  scope(): string[] | undefined {
    return parseScope(this.single('scope'));
  }
}
