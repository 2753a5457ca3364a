import type { AreaCatalogue } from '../types.js';

/** The consent page (daemon/views/login.ts `consentPage`). */
export const consent: AreaCatalogue = {
  en: {
    'consent.title': 'Allow {client}?',
    'consent.heading': 'Allow {client} to access your account?',
    'consent.asks': 'Signed in as {email}. {client} asks to:',
    'consent.acceptsPrivacy': 'Allowing accepts the privacy policy (version {privacy}).',
    'consent.acceptsTos': 'Allowing accepts the terms of service (version {tos}).',
    'consent.acceptsBoth':
      'Allowing accepts the privacy policy (version {privacy}) and the terms of service (version {tos}).',
    'consent.allow': 'Allow',
    'consent.deny': 'Deny',
    'consent.documentHost': 'This app is identified by its document at {host}.',
    'consent.unverified': 'Provided by the app, not verified',
    'consent.homepage': 'Home page',
    'consent.privacyPolicy': 'Privacy policy',
    'consent.terms': 'Terms of service',
    'consent.logoAlt': 'Logo of {client}',
    'consent.redirectHost': 'After you answer you will be sent to {host}.',
  },
  de: {
    'consent.title': '{client} erlauben?',
    'consent.heading': 'Darf {client} auf Ihr Konto zugreifen?',
    'consent.asks': 'Angemeldet als {email}. {client} möchte:',
    'consent.acceptsPrivacy': 'Mit „Erlauben“ akzeptieren Sie die Datenschutzerklärung (Version {privacy}).',
    'consent.acceptsTos': 'Mit „Erlauben“ akzeptieren Sie die Nutzungsbedingungen (Version {tos}).',
    'consent.acceptsBoth':
      'Mit „Erlauben“ akzeptieren Sie die Datenschutzerklärung (Version ' +
      '{privacy}) und die Nutzungsbedingungen (Version {tos}).',
    'consent.allow': 'Erlauben',
    'consent.deny': 'Ablehnen',
    'consent.documentHost': 'Diese App wird durch ihr Dokument auf {host} identifiziert.',
    'consent.unverified': 'Angaben der App, nicht geprüft',
    'consent.homepage': 'Website',
    'consent.privacyPolicy': 'Datenschutzerklärung',
    'consent.terms': 'Nutzungsbedingungen',
    'consent.logoAlt': 'Logo von {client}',
    'consent.redirectHost': 'Nach Ihrer Antwort werden Sie zu {host} weitergeleitet.',
  },
  fr: {
    'consent.title': 'Autoriser {client} ?',
    'consent.heading': 'Autoriser {client} à accéder à votre compte ?',
    'consent.asks': 'Connecté en tant que {email}. {client} demande à :',
    'consent.acceptsPrivacy': 'En autorisant, vous acceptez la politique de confidentialité (version {privacy}).',
    'consent.acceptsTos': 'En autorisant, vous acceptez les conditions d’utilisation (version {tos}).',
    'consent.acceptsBoth':
      'En autorisant, vous acceptez la politique de confidentialité (version ' +
      '{privacy}) et les conditions d’utilisation (version {tos}).',
    'consent.allow': 'Autoriser',
    'consent.deny': 'Refuser',
    'consent.documentHost': 'Cette application est identifiée par son document sur {host}.',
    'consent.unverified': 'Fourni par l’application, non vérifié',
    'consent.homepage': 'Site web',
    'consent.privacyPolicy': 'Politique de confidentialité',
    'consent.terms': 'Conditions d’utilisation',
    'consent.logoAlt': 'Logo de {client}',
    'consent.redirectHost': 'Après votre réponse, vous serez envoyé vers {host}.',
  },
};
