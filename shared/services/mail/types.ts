/**
 * Email notifier providers: the transports a tenant's mail can go through, tried in the
 * tenant's order (strategy `priority_failover`).
 */
import type { MailErrorCode } from './errors.js';

/** One message as the outbox hands it to a provider. */
export interface OutgoingEmail {
  /** The outbox row id; also the stable Message-ID, so a receiver can drop a retried duplicate. */
  id: string;
  tenantId: string | null;
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Not to be sent: the deliverer records it as delivered via `dropped` (Outbox EmailInput.drop). */
  drop?: boolean;
}

export interface SendResult {
  messageId?: string;
}

/** The interface specification's "Email notifier provider entry" (every field optional there). */
export interface EmailProviderEntry {
  id: string;
  name: string;
  description: string;
  category: string;
  /** Where the provider's configuration comes from: `environment` (IAM_* variables) or `builtin`. */
  configSource: string;
  configured: boolean;
  /** Configuration the provider needs before it can send, by variable name. */
  missingRequiredFields: string[];
  defaultFrom: string;
}

export interface EmailProvider {
  readonly id: string;
  /** The provider as the admin API shows it; `configured` may change only with a restart. */
  describe(): EmailProviderEntry;
  /**
   * The provider as one tenant sees it (a plugin provider configured per tenant), or undefined
   * when it is not available to that tenant and so left out of its provider list. Absent: describe().
   */
  describeFor?(tenantId: string): Promise<EmailProviderEntry | undefined>;
  /**
   * Sends one message, resolving once the provider has accepted it. Throwing means "not sent":
   * the next provider in the tenant's order is tried, then the outbox retries later.
   */
  send(msg: OutgoingEmail): Promise<SendResult>;
  /**
   * Checks that the provider would accept mail now, without sending any (tenant provisioning's
   * `mail_transport_verified` step). Absent for a provider that needs no network: it passes.
   * Rejects, within about `timeoutMs`, when the transport does not answer.
   */
  verify?(timeoutMs: number): Promise<void>;
  /**
   * The error code (errors.ts) of a failure of this provider's send. Absent: `provider_error`,
   * unless the error names its own code.
   */
  errorCode?(error: unknown): MailErrorCode;
  /** Releases connections; waits for messages already handed over. */
  close?(): Promise<void>;
}

/** The only routing strategy so far: providers in order, the first that accepts wins. */
export const EMAIL_STRATEGIES = ['priority_failover'] as const;
export type EmailStrategy = (typeof EMAIL_STRATEGIES)[number];

export interface EmailSettings {
  strategy: EmailStrategy;
  providerOrder: string[];
}

/** Most providers a tenant can list: failover through more than a handful only adds delay. */
export const MAX_PROVIDER_ORDER = 10;
