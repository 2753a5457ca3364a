import type { AreaCatalogue } from '../types.js';

/**
 * What each scope lets an application do, in the user's words: the consent page and the
 * account page's list of consents (shared/i18n/scopes.ts `scopeDescriptions`).
 */
export const scopes: AreaCatalogue = {
  en: {
    'scopes.openid': 'Know who you are',
    'scopes.profile': 'See your name',
    'scopes.email': 'See your email address',
    'scopes.address': 'See your postal address',
    'scopes.phone': 'See your phone number',
    'scopes.offline_access': 'Stay signed in when you are away',
    'scopes.account': 'Manage your account',
  },
  de: {
    'scopes.openid': 'Wissen, wer Sie sind',
    'scopes.profile': 'Ihren Namen sehen',
    'scopes.email': 'Ihre E-Mail-Adresse sehen',
    'scopes.address': 'Ihre Postanschrift sehen',
    'scopes.phone': 'Ihre Telefonnummer sehen',
    'scopes.offline_access': 'Angemeldet bleiben, auch wenn Sie nicht da sind',
    'scopes.account': 'Ihr Konto verwalten',
  },
  fr: {
    'scopes.openid': 'Savoir qui vous êtes',
    'scopes.profile': 'Voir votre nom',
    'scopes.email': 'Voir votre adresse e-mail',
    'scopes.address': 'Voir votre adresse postale',
    'scopes.phone': 'Voir votre numéro de téléphone',
    'scopes.offline_access': 'Rester connecté en votre absence',
    'scopes.account': 'Gérer votre compte',
  },
};
