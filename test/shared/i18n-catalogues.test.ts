import test from 'ava';
import { catalogueKeys, LOCALES, negotiateLocale, t } from '../../shared/i18n/index.js';
import { CATALOGUES } from '../../shared/i18n/catalogues/index.js';

const placeholders = (m: unknown): string[] => [...new Set(JSON.stringify(m).match(/\{\w+\}/g) ?? [])].sort();

test('every catalogue area has every English key in every language, with the same placeholders', (t_) => {
  const problems: string[] = [];
  for (const [area, cat] of Object.entries(CATALOGUES)) {
    for (const locale of LOCALES) {
      for (const key of Object.keys(cat.en)) {
        const msg = cat[locale][key];
        if (msg === undefined) problems.push(`${area}/${locale}: missing ${key}`);
        else if (placeholders(msg).join() !== placeholders(cat.en[key]).join())
          problems.push(
            `${area}/${locale}: ${key} has ${placeholders(msg).join()} not ${placeholders(cat.en[key]).join()}`,
          );
      }
      for (const key of Object.keys(cat[locale]))
        if (!(key in cat.en)) problems.push(`${area}/${locale}: extra ${key}`);
    }
  }
  t_.deepEqual(problems, []);
});

test('a key is defined in one area only', (t_) => {
  const seen = new Map<string, string>();
  const dupes: string[] = [];
  for (const [area, cat] of Object.entries(CATALOGUES))
    for (const key of Object.keys(cat.en)) {
      if (seen.has(key)) dupes.push(`${key} in ${seen.get(key)} and ${area}`);
      seen.set(key, area);
    }
  t_.deepEqual(dupes, []);
  t_.true(Object.keys(catalogueKeys().en).length > 0);
});

test('ui_locales wins over Accept-Language, q-values order the header, regions fall back', (t_) => {
  t_.is(negotiateLocale('fr-CA de', 'de'), 'fr');
  t_.is(negotiateLocale('ja', 'en;q=0.5, de-DE;q=0.9'), 'de');
  t_.is(negotiateLocale(undefined, 'ja, *;q=0.1'), 'en');
  t_.is(negotiateLocale(null, 'fr;q=0, de;q=0.2'), 'de');
  t_.is(t('de', 'common.skip'), 'Zum Inhalt springen');
});
