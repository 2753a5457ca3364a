import type { AreaCatalogue } from '../types.js';

/** The landing page at GET / (daemon/routes/landing.ts): what this service is and where to go next. */
export const landing: AreaCatalogue = {
  en: {
    'landing.title': 'Sign-in service',
    'landing.heading': 'Sign-in service',
    'landing.intro':
      'This server signs people in to applications with OAuth 2.0 and OpenID Connect. Applications send you here ' +
      'when you sign in; you do not need to visit it yourself.',
    'landing.account.heading': 'Your account',
    'landing.account.text': 'See the devices signed in to your account, the apps you gave access to and your passkeys.',
    'landing.account.link': 'Go to your account',
    'landing.developers.heading': 'For developers',
    'landing.developers.discovery': 'OpenID Connect discovery document (one issuer serves every tenant):',
    'landing.developers.docs': 'To connect an application, start with {file} in the project’s documentation.',
  },
  de: {
    'landing.title': 'Anmeldedienst',
    'landing.heading': 'Anmeldedienst',
    'landing.intro':
      'Dieser Server meldet Personen mit OAuth 2.0 und OpenID Connect bei Anwendungen an. Anwendungen leiten Sie ' +
      'bei der Anmeldung hierher; Sie müssen ihn nicht selbst aufrufen.',
    'landing.account.heading': 'Ihr Konto',
    'landing.account.text':
      'Sehen Sie die bei Ihrem Konto angemeldeten Geräte, die Apps, denen Sie Zugriff gegeben haben, und Ihre ' +
      'Passkeys.',
    'landing.account.link': 'Zu Ihrem Konto',
    'landing.developers.heading': 'Für Entwickler',
    'landing.developers.discovery': 'OpenID-Connect-Discovery-Dokument (ein Aussteller für alle Mandanten):',
    'landing.developers.docs':
      'Um eine Anwendung anzubinden, beginnen Sie mit {file} in der Dokumentation des Projekts.',
  },
  fr: {
    'landing.title': 'Service de connexion',
    'landing.heading': 'Service de connexion',
    'landing.intro':
      'Ce serveur connecte les personnes aux applications avec OAuth 2.0 et OpenID Connect. Les applications ' +
      'vous envoient ici lorsque vous vous connectez ; vous n’avez pas besoin de le consulter vous-même.',
    'landing.account.heading': 'Votre compte',
    'landing.account.text':
      'Consultez les appareils connectés à votre compte, les applications auxquelles vous avez donné accès et ' +
      'vos clés d’accès.',
    'landing.account.link': 'Accéder à votre compte',
    'landing.developers.heading': 'Pour les développeurs',
    'landing.developers.discovery':
      'Document de découverte OpenID Connect (un seul émetteur pour tous les locataires) :',
    'landing.developers.docs': 'Pour connecter une application, commencez par {file} dans la documentation du projet.',
  },
};
