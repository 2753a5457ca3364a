/** Assertions shared by the tests of the user-facing API (/api/user/…, the account pages). */
import type { ExecutionContext } from 'ava';

/** The user API's error shape: the status, a support code like AB123456 and an error_id (UUID). */
export async function assertUserError(
  t: ExecutionContext,
  res: Response,
  status: number,
): Promise<Record<string, unknown>> {
  t.is(res.status, status);
  const body = (await res.json()) as Record<string, unknown>;
  t.regex(String(body.error_code), /^[A-Z]{2}[0-9]{6}$/);
  t.regex(String(body.error_id), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  return body;
}
