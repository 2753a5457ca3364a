/** A tenant's look on its pages and in its mails (docs/branding.md). */
export interface TenantBranding {
  /** The name users see (the tenant's display name, else its name). */
  displayName: string;
  /** An https (or same-origin) image URL shown at the top of the tenant's pages and mails. */
  logoUrl?: string;
  /** The primary colour, `#rrggbb`, for buttons and links. */
  primaryColor?: string;
  /** Where users get help: an https URL or a mailto: address. */
  supportUrl?: string;
  /** Extra CSS for the tenant's pages, inlined under the page's CSP nonce. */
  customCss?: string;
}
