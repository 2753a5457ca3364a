export const LOCALES = ['en', 'de', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];

/** A string with `{name}` placeholders, or plural forms keyed by CLDR category (`count` picks). */
export type Message = string | (Partial<Record<Intl.LDMLPluralRule, string>> & { other: string });
export type Catalogue = Record<string, Message>;
/** One area's messages in every language: English is the reference. */
export type AreaCatalogue = Record<Locale, Catalogue>;
