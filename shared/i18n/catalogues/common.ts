import type { AreaCatalogue } from '../types.js';

/** Messages every page shares (the frame of daemon/views/html.ts). */
export const common: AreaCatalogue = {
  en: {
    'common.skip': 'Skip to content',
    'common.support': 'Help and support',
  },
  de: {
    'common.skip': 'Zum Inhalt springen',
    'common.support': 'Hilfe und Support',
  },
  fr: {
    'common.skip': 'Aller au contenu',
    'common.support': 'Aide et assistance',
  },
};
