/**
 * What a sign-in method hands the sign-in service (sign-in.ts): a proof of identity whose
 * checks are done, ready to be spent in the sign-in's transaction. A method (email code,
 * passkey, upstream provider, direct-auth artifact) implements `ProofSource`; the sign-in
 * service owns the transaction, the authorization request and the session. Apart from
 * sign-in.ts so that the methods can name the contract without importing the service that
 * imports them.
 */
import type { Tx } from '../../db/index.js';
import type { LoginUser } from '../../repositories/index.js';

/** What spending a proof yields: the user it signs in, or a refusal to throw once committed. */
export type Spent =
  | { user: LoginUser }
  /**
   * The proof was spent but signs no one in (the right code of a disabled account): what the
   * method wrote commits (the code stays used), then `refused` records the failure and throws.
   */
  | { refused: () => Promise<never> };

/** A checked proof of identity (see the file header). */
export interface SignInProof {
  /** The authentication context class and methods of the sign-in (OIDC Core §2, RFC 8176). */
  readonly acr: string;
  readonly amr: string[];
  /** When the user authenticated (OIDC Core §2 auth_time), in ms. */
  readonly authTime: number;
  /** The direct-auth provider id of the method, recorded on an artifact (`email_code`, `passkey`). */
  readonly provider: string;
  /** The passkey of a passkey sign-in, so an artifact's redemption can check it is still registered. */
  readonly passkeyId?: string;
  /**
   * Spends the proof in the sign-in's transaction (consumes the code, records the passkey's
   * use, links the upstream subject, consumes the artifact) and names the user. Throws to
   * refuse: then nothing of the sign-in commits.
   */
  spend(tx: Tx): Promise<Spent>;
}

/** A sign-in method: checks what the user presented and returns the proof (or throws its refusal). */
export interface ProofSource<I> {
  prove(input: I): Promise<SignInProof>;
}
