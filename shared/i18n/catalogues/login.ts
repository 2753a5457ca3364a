import type { AreaCatalogue } from '../types.js';

/**
 * The login pages (daemon/views/login.ts): the email step, the code step, the passkey and
 * upstream buttons, and the sentences shown when a step is refused.
 */
export const login: AreaCatalogue = {
  en: {
    'login.title': 'Sign in to {client}',
    'login.emailHint': 'We will email you a six-digit code.',
    'login.emailLabel': 'Email address',
    'login.sendCode': 'Email me a code',
    'login.or': 'Or',
    'login.continueWith': 'Continue with {provider}',
    'login.passkey': 'Sign in with a passkey',
    'login.codeTitle': 'Enter your code — {client}',
    'login.codeHeading': 'Check your email',
    'login.codeHint': 'We sent a six-digit code to {email} if it belongs to an account. It expires in 10 minutes.',
    'login.codeLabel': 'Sign-in code',
    'login.signIn': 'Sign in',
    'login.resend': 'Send a new code',
    'login.useDifferentAddress': 'Use a different address',
    'login.codeSent': 'Code sent.',
    'login.invalidEmail': 'Enter a valid email address, like name@example.com.',
    'login.emailAgain': 'Enter your email address again.',
    'login.codeRefused':
      'That code did not work: it is wrong, has expired or was used up. Check it, or ask for a new code.',
    'login.throttled': {
      one: 'Too many attempts. Try again in {count} second.',
      other: 'Too many attempts. Try again in {count} seconds.',
    },
    'login.completed': 'This sign-in request was already completed; start again.',
    'login.upstreamRefused':
      'Signing in there could not be completed. Start again, or sign in with an email code instead.',
    'login.passkeyUnavailable': 'Passkey sign-in is not available right now.',
    'login.passkeySigning': 'Signing in…',
    'login.passkeyRemoved':
      'This passkey is no longer registered for your account, so it cannot sign you in. ' +
      'Sign in with an email code, then add a new passkey on your account page.',
    'login.passkeyRefused': 'The passkey sign-in was refused.',
    'login.passkeyCancelled': 'The passkey sign-in was cancelled or timed out. Try again.',
    'login.passkeyFailed': 'The passkey sign-in did not work. Try again, or sign in with an email code.',
  },
  de: {
    'login.title': 'Bei {client} anmelden',
    'login.emailHint': 'Wir schicken Ihnen einen sechsstelligen Code per E-Mail.',
    'login.emailLabel': 'E-Mail-Adresse',
    'login.sendCode': 'Code per E-Mail senden',
    'login.or': 'Oder',
    'login.continueWith': 'Weiter mit {provider}',
    'login.passkey': 'Mit einem Passkey anmelden',
    'login.codeTitle': 'Code eingeben – {client}',
    'login.codeHeading': 'Sehen Sie in Ihr Postfach',
    'login.codeHint':
      'Falls {email} zu einem Konto gehört, haben wir einen sechsstelligen ' +
      'Code dorthin geschickt. Er ist 10 Minuten lang gültig.',
    'login.codeLabel': 'Anmeldecode',
    'login.signIn': 'Anmelden',
    'login.resend': 'Neuen Code senden',
    'login.useDifferentAddress': 'Andere Adresse verwenden',
    'login.codeSent': 'Code gesendet.',
    'login.invalidEmail': 'Geben Sie eine gültige E-Mail-Adresse ein, etwa name@example.com.',
    'login.emailAgain': 'Geben Sie Ihre E-Mail-Adresse bitte noch einmal ein.',
    'login.codeRefused':
      'Dieser Code hat nicht funktioniert: Er ist falsch, abgelaufen oder ' +
      'aufgebraucht. Prüfen Sie ihn oder fordern Sie einen neuen Code an.',
    'login.throttled': {
      one: 'Zu viele Versuche. Versuchen Sie es in {count} Sekunde erneut.',
      other: 'Zu viele Versuche. Versuchen Sie es in {count} Sekunden erneut.',
    },
    'login.completed': 'Diese Anmeldung wurde bereits abgeschlossen. Bitte beginnen Sie von vorn.',
    'login.upstreamRefused':
      'Die Anmeldung dort konnte nicht abgeschlossen werden. Beginnen Sie von vorn ' +
      'oder melden Sie sich stattdessen mit einem E-Mail-Code an.',
    'login.passkeyUnavailable': 'Die Anmeldung mit einem Passkey ist gerade nicht möglich.',
    'login.passkeySigning': 'Anmeldung läuft …',
    'login.passkeyRemoved':
      'Dieser Passkey ist für Ihr Konto nicht mehr registriert und kann Sie daher nicht anmelden. ' +
      'Melden Sie sich mit einem E-Mail-Code an und fügen Sie dann auf Ihrer Kontoseite einen neuen Passkey hinzu.',
    'login.passkeyRefused': 'Die Anmeldung mit dem Passkey wurde abgelehnt.',
    'login.passkeyCancelled':
      'Die Anmeldung mit dem Passkey wurde abgebrochen oder hat zu lange gedauert. Versuchen Sie es erneut.',
    'login.passkeyFailed':
      'Die Anmeldung mit dem Passkey hat nicht funktioniert. ' +
      'Versuchen Sie es erneut oder melden Sie sich mit einem E-Mail-Code an.',
  },
  fr: {
    'login.title': 'Se connecter à {client}',
    'login.emailHint': 'Nous allons vous envoyer un code à six chiffres par e-mail.',
    'login.emailLabel': 'Adresse e-mail',
    'login.sendCode': 'Recevoir un code par e-mail',
    'login.or': 'Ou',
    'login.continueWith': 'Continuer avec {provider}',
    'login.passkey': 'Se connecter avec une clé d’accès',
    'login.codeTitle': 'Saisissez votre code — {client}',
    'login.codeHeading': 'Consultez votre messagerie',
    'login.codeHint':
      'Si {email} correspond à un compte, nous y avons envoyé un code à six chiffres. Il expire dans 10 minutes.',
    'login.codeLabel': 'Code de connexion',
    'login.signIn': 'Se connecter',
    'login.resend': 'Envoyer un nouveau code',
    'login.useDifferentAddress': 'Utiliser une autre adresse',
    'login.codeSent': 'Code envoyé.',
    'login.invalidEmail': 'Saisissez une adresse e-mail valide, par exemple nom@example.com.',
    'login.emailAgain': 'Saisissez à nouveau votre adresse e-mail.',
    'login.codeRefused':
      'Ce code n’a pas fonctionné : il est erroné, a expiré ou a déjà servi ' +
      'trop de fois. Vérifiez-le ou demandez un nouveau code.',
    'login.throttled': {
      one: 'Trop de tentatives. Réessayez dans {count} seconde.',
      other: 'Trop de tentatives. Réessayez dans {count} secondes.',
    },
    'login.completed': 'Cette demande de connexion a déjà abouti ; recommencez depuis le début.',
    'login.upstreamRefused':
      'La connexion n’a pas pu aboutir. Recommencez, ou connectez-vous plutôt avec un code reçu par e-mail.',
    'login.passkeyUnavailable': 'La connexion par clé d’accès n’est pas disponible pour le moment.',
    'login.passkeySigning': 'Connexion en cours…',
    'login.passkeyRemoved':
      'Cette clé d’accès n’est plus enregistrée pour votre compte et ne peut donc pas vous connecter. ' +
      'Connectez-vous avec un code reçu par e-mail, ' +
      'puis ajoutez une nouvelle clé d’accès depuis la page de votre compte.',
    'login.passkeyRefused': 'La connexion par clé d’accès a été refusée.',
    'login.passkeyCancelled': 'La connexion par clé d’accès a été annulée ou a expiré. Réessayez.',
    'login.passkeyFailed':
      'La connexion par clé d’accès n’a pas fonctionné. Réessayez, ou connectez-vous avec un code reçu par e-mail.',
  },
};
