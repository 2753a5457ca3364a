/**
 * WebAuthn challenges of the passkey ceremonies: stored server side, single use (a conditional
 * UPDATE with one winner), expiring after PASSKEY_CHALLENGE_TTL_MS, and the signed client data
 * checked against them. Separate from `passkeys.ts` because registration and authentication
 * share it and it touches only the `webauthn_challenges` rows, not the credentials.
 */
import { newId, sameText } from '../../crypto.js';
import type { Database } from '../../db/index.js';
import { TenantScope, type WebauthnChallengeRow } from '../../repositories/index.js';
import { withReason } from './history.js';
import { PASSKEY_CHALLENGE_TTL_MS, PasskeyRefused } from './passkey-contract.js';

/** The client data an assertion or attestation signed (WebAuthn §5.8.1), or undefined when unreadable. */
function clientData(b64: unknown): { type?: unknown; challenge?: unknown; origin?: unknown } | undefined {
  if (typeof b64 !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(b64, 'base64url').toString('utf8'));
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Stores a new challenge for this tenant, live for PASSKEY_CHALLENGE_TTL_MS; returns its id. */
export async function saveChallenge(
  db: Database,
  tenantId: string,
  c: {
    purpose: 'registration' | 'authentication';
    challenge: string;
    userId?: string;
    sessionId?: string;
    clientId?: string;
    authRequestId?: string | null;
  },
): Promise<string> {
  const id = newId('wac', 18);
  const now = Date.now();
  await new TenantScope(db, tenantId).webauthnChallenges.insert({
    id,
    purpose: c.purpose,
    challenge: c.challenge,
    userId: c.userId ?? null,
    sessionId: c.sessionId ?? null,
    clientId: c.clientId ?? null,
    authRequestId: c.authRequestId ?? null,
    createdAt: now,
    expiresAt: now + PASSKEY_CHALLENGE_TTL_MS,
  });
  return id;
}

/** Finds and consumes a live challenge of this purpose and binding (one winner), or refuses. */
export async function takeChallenge(
  scope: TenantScope,
  id: string,
  purpose: 'registration' | 'authentication',
  bound: (c: WebauthnChallengeRow) => boolean,
) {
  const ch = await scope.webauthnChallenges.find(id);
  if (!ch || ch.purpose !== purpose || !bound(ch) || !(await scope.webauthnChallenges.consume(id, purpose, Date.now())))
    throw withReason(
      new PasskeyRefused('challenge_id is unknown, expired, already used, or not bound to this request.'),
      'challenge_invalid',
    );
  return ch;
}

/**
 * WebAuthn §7.1 steps 7–9 / §7.2 steps 11–13, checked here first for a clear refusal: the
 * type, our challenge, and our origin compared exactly (another port, scheme or a suffix
 * differs). The library checks them again.
 */
export function checkClientData(b64: unknown, type: string, challenge: string, origin: string): void {
  const refuse = (m: string) => withReason(new PasskeyRefused(m), 'assertion_invalid');
  const c = clientData(b64);
  if (!c) throw refuse('credential.response.clientDataJSON is not base64url JSON.');
  if (c.type !== type) throw refuse(`credential.response.clientDataJSON type must be ${type}.`);
  if (typeof c.challenge !== 'string' || !sameText(c.challenge, challenge))
    throw refuse('credential.response.clientDataJSON challenge is not the challenge of challenge_id.');
  if (c.origin !== origin) throw refuse(`credential.response.clientDataJSON origin must be exactly ${origin}.`);
}
