import type { AreaCatalogue } from '../types.js';

/**
 * The error pages of the sign-in flow (daemon/views/html.ts `errorPage`): `<name>.title` is the
 * heading, `<name>.message` the sentence under it.
 */
export const errors: AreaCatalogue = {
  en: {
    'errors.clientDocument.title': 'Application not verifiable',
    'errors.clientDocument.message': "The application's metadata document could not be used. No redirect was made.",
    'errors.unknownClient.title': 'Unknown application',
    'errors.unknownClient.message': 'The application that sent you here is not registered. No redirect was made.',
    'errors.badRedirect.title': 'Invalid redirect',
    'errors.badRedirect.message':
      "The redirect address does not match the application's registration. No redirect was made.",
    'errors.unavailable.title': 'Unavailable',
    'errors.unavailable.message': 'This application is not available at the moment.',
    'errors.signInUnavailable.title': 'Sign-in unavailable',
    'errors.signInUnavailable.message': 'Signing in there is not possible at the moment. Try again later.',
    'errors.expired.title': 'Sign-in expired',
    'errors.expired.message': 'This sign-in request has expired. Go back to the application and start again.',
    'errors.forged.title': 'Request refused',
    'errors.forged.message': 'The form could not be verified. Go back to the application and start again.',
    'errors.signedOut.title': 'Signed out',
    'errors.signedOut.message': 'You are no longer signed in. Go back to the application and start again.',
    'errors.answered.title': 'Already answered',
    'errors.answered.message': 'This request was already answered.',
    'errors.notCompleted.title': 'Sign-in not completed',
    'errors.notCompleted.message':
      'Signing in there could not be completed. Go back to the application and start again.',
    'errors.badAuthorizationRequest.title': 'Request refused',
    'errors.badAuthorizationRequest.message':
      "The application's request could not be accepted. No redirect was made. " +
      'Go back to the application and start again.',
  },
  de: {
    'errors.clientDocument.title': 'Anwendung nicht überprüfbar',
    'errors.clientDocument.message':
      'Das Metadatendokument der Anwendung konnte nicht verwendet werden. Sie wurden nicht weitergeleitet.',
    'errors.unknownClient.title': 'Unbekannte Anwendung',
    'errors.unknownClient.message':
      'Die Anwendung, die Sie hierher geschickt hat, ist nicht registriert. Sie wurden nicht weitergeleitet.',
    'errors.badRedirect.title': 'Ungültige Weiterleitung',
    'errors.badRedirect.message':
      'Die Weiterleitungsadresse passt nicht zur Registrierung der Anwendung. Sie wurden nicht weitergeleitet.',
    'errors.unavailable.title': 'Nicht verfügbar',
    'errors.unavailable.message': 'Diese Anwendung ist im Moment nicht verfügbar.',
    'errors.signInUnavailable.title': 'Anmeldung nicht möglich',
    'errors.signInUnavailable.message':
      'Die Anmeldung dort ist im Moment nicht möglich. Versuchen Sie es später erneut.',
    'errors.expired.title': 'Anmeldung abgelaufen',
    'errors.expired.message':
      'Diese Anmeldeanfrage ist abgelaufen. Kehren Sie zur Anwendung zurück und beginnen Sie von vorn.',
    'errors.forged.title': 'Anfrage abgelehnt',
    'errors.forged.message':
      'Das Formular konnte nicht überprüft werden. Kehren Sie zur Anwendung zurück und beginnen Sie von vorn.',
    'errors.signedOut.title': 'Abgemeldet',
    'errors.signedOut.message':
      'Sie sind nicht mehr angemeldet. Kehren Sie zur Anwendung zurück und beginnen Sie von vorn.',
    'errors.answered.title': 'Bereits beantwortet',
    'errors.answered.message': 'Diese Anfrage wurde bereits beantwortet.',
    'errors.notCompleted.title': 'Anmeldung nicht abgeschlossen',
    'errors.notCompleted.message':
      'Die Anmeldung dort konnte nicht abgeschlossen werden. Kehren Sie ' +
      'zur Anwendung zurück und beginnen Sie von vorn.',
    'errors.badAuthorizationRequest.title': 'Anfrage abgelehnt',
    'errors.badAuthorizationRequest.message':
      'Die Anfrage der Anwendung konnte nicht angenommen werden. Es wurde nicht weitergeleitet. ' +
      'Kehren Sie zur Anwendung zurück und beginnen Sie von vorn.',
  },
  fr: {
    'errors.clientDocument.title': 'Application non vérifiable',
    'errors.clientDocument.message':
      'Le document de métadonnées de l’application n’a pas pu être utilisé. Aucune redirection n’a été effectuée.',
    'errors.unknownClient.title': 'Application inconnue',
    'errors.unknownClient.message':
      'L’application qui vous a envoyé ici n’est pas enregistrée. Aucune redirection n’a été effectuée.',
    'errors.badRedirect.title': 'Redirection invalide',
    'errors.badRedirect.message':
      'L’adresse de redirection ne correspond pas à l’enregistrement de ' +
      'l’application. Aucune redirection n’a été effectuée.',
    'errors.unavailable.title': 'Indisponible',
    'errors.unavailable.message': 'Cette application n’est pas disponible pour le moment.',
    'errors.signInUnavailable.title': 'Connexion indisponible',
    'errors.signInUnavailable.message': 'La connexion par ce moyen est impossible pour le moment. Réessayez plus tard.',
    'errors.expired.title': 'Connexion expirée',
    'errors.expired.message': 'Cette demande de connexion a expiré. Retournez dans l’application et recommencez.',
    'errors.forged.title': 'Demande refusée',
    'errors.forged.message': 'Le formulaire n’a pas pu être vérifié. Retournez dans l’application et recommencez.',
    'errors.signedOut.title': 'Déconnecté',
    'errors.signedOut.message': 'Vous n’êtes plus connecté. Retournez dans l’application et recommencez.',
    'errors.answered.title': 'Déjà traitée',
    'errors.answered.message': 'Cette demande a déjà reçu une réponse.',
    'errors.notCompleted.title': 'Connexion inachevée',
    'errors.notCompleted.message':
      'La connexion par ce moyen n’a pas pu aboutir. Retournez dans l’application et recommencez.',
    'errors.badAuthorizationRequest.title': 'Demande refusée',
    'errors.badAuthorizationRequest.message':
      'La demande de l’application n’a pas pu être acceptée. Aucune redirection n’a été faite. ' +
      'Retournez dans l’application et recommencez.',
  },
};
