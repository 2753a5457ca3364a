import type { AreaCatalogue } from '../types.js';

/** Messages every page shares (the frame of daemon/views/html.ts). */
export const common: AreaCatalogue = {
  en: {
    'common.skip': 'Skip to content',
  },
  de: {
    'common.skip': 'Zum Inhalt springen',
  },
  fr: {
    'common.skip': 'Aller au contenu',
  },
};
