import type { AreaCatalogue } from '../types.js';

/** Messages every page shares (the frame of daemon/views/html.ts). */
export const common: AreaCatalogue = {
  en: {
    'common.skip': 'Skip to content',
    'common.support': 'Help and support',
    'common.formPostTitle': 'Returning to the application',
    'common.formPostButton': 'Continue',
  },
  de: {
    'common.skip': 'Zum Inhalt springen',
    'common.support': 'Hilfe und Support',
    'common.formPostTitle': 'Zurück zur Anwendung',
    'common.formPostButton': 'Weiter',
  },
  fr: {
    'common.skip': 'Aller au contenu',
    'common.support': 'Aide et assistance',
    'common.formPostTitle': 'Retour à l’application',
    'common.formPostButton': 'Continuer',
  },
};
