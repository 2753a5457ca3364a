import type { z } from 'zod';
import { badRequest, type FieldIssue } from '../errors.js';

/**
 * Turns zod issues into field-level details; the message names the first failing field. Each
 * field and message once: two checks of one value may fail alike (the email schema's format
 * check and its deliverability refinement both say "must be an email address").
 */
export function issuesOf(error: z.ZodError, prefix = ''): FieldIssue[] {
  const seen = new Set<string>();
  return error.issues
    .map((i) => ({
      field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || prefix || '(body)',
      message:
        i.code === 'unrecognized_keys' ? `unknown field(s): ${(i as { keys: string[] }).keys.join(', ')}` : i.message,
    }))
    .filter((d) => {
      const key = JSON.stringify([d.field, d.message]);
      return !seen.has(key) && !!seen.add(key);
    });
}

/** Validates `input` against `schema`, or throws a 400 invalid_request naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where = ''): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const details = issuesOf(r.error, where);
  const first = details[0];
  throw badRequest(`${first.field}: ${first.message}`, details);
}
