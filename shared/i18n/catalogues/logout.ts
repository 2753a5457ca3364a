import type { AreaCatalogue } from '../types.js';

/** RP-initiated logout's pages (daemon/routes/oauth/endpoints.ts): confirmation, done, refused. */
export const logout: AreaCatalogue = {
  en: {
    'logout.failedTitle': 'Sign-out failed',
    'logout.invalid': 'The sign-out request is not valid.',
    'logout.unregistered': 'The address to return to is not registered for this application.',
    'logout.confirmTitle': 'Sign out',
    'logout.confirmHeading': 'Sign out?',
    'logout.confirmQuestion': 'Do you want to sign out of your account ({email})?',
    'logout.button': 'Sign out',
    'logout.doneTitle': 'Signed out',
    'logout.doneHeading': 'You are signed out',
    'logout.doneMessage': 'You can close this window.',
  },
  de: {
    'logout.failedTitle': 'Abmeldung fehlgeschlagen',
    'logout.invalid': 'Die Abmeldeanfrage ist ungültig.',
    'logout.unregistered': 'Die Rücksprungadresse ist für diese Anwendung nicht registriert.',
    'logout.confirmTitle': 'Abmelden',
    'logout.confirmHeading': 'Abmelden?',
    'logout.confirmQuestion': 'Möchten Sie sich von Ihrem Konto ({email}) abmelden?',
    'logout.button': 'Abmelden',
    'logout.doneTitle': 'Abgemeldet',
    'logout.doneHeading': 'Sie sind abgemeldet',
    'logout.doneMessage': 'Sie können dieses Fenster jetzt schließen.',
  },
  fr: {
    'logout.failedTitle': 'Échec de la déconnexion',
    'logout.invalid': 'La demande de déconnexion n’est pas valide.',
    'logout.unregistered': 'L’adresse de retour n’est pas enregistrée pour cette application.',
    'logout.confirmTitle': 'Se déconnecter',
    'logout.confirmHeading': 'Se déconnecter ?',
    'logout.confirmQuestion': 'Voulez-vous vous déconnecter de votre compte ({email}) ?',
    'logout.button': 'Se déconnecter',
    'logout.doneTitle': 'Déconnecté',
    'logout.doneHeading': 'Vous êtes déconnecté',
    'logout.doneMessage': 'Vous pouvez fermer cette fenêtre.',
  },
};
