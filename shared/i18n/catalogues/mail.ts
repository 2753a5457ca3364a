import type { AreaCatalogue } from '../types.js';

/**
 * The default mail templates (docs/email.md, "Templates"): per kind a subject, a text and an
 * HTML body (shared/services/mail/templates.ts wraps the body in the tenant's branded frame).
 * `{{name}}` tags are template variables, filled when the mail is composed; each kind's variables
 * are listed in MAIL_KINDS. A tenant may override any part per locale.
 */
export const mail: AreaCatalogue = {
  en: {
    'mail.layout.support': 'Need help? Contact us:',
    'mail.sign_in_code.subject': 'Your sign-in code: {{code}}',
    'mail.sign_in_code.text':
      'Your sign-in code for {{issuer_host}} is {{code}}.\n\n' +
      'It expires in {{expires_minutes}} minutes. If you did not ask for it, ignore this message.\n',
    'mail.sign_in_code.html':
      '<p>Your sign-in code for {{tenant_name}} is</p>' +
      '<p style="font-size:24px;letter-spacing:4px"><strong>{{code}}</strong></p>' +
      '<p>It expires in {{expires_minutes}} minutes. If you did not ask for it, ignore this message.</p>',
    'mail.email_confirmation.subject': 'Your confirmation code: {{code}}',
    'mail.email_confirmation.text':
      'Your code to make this the address of your account at {{issuer_host}} is {{code}}.\n\n' +
      'It expires in {{expires_minutes}} minutes. If you did not ask for it, ignore this message: nothing changes.\n',
    'mail.email_confirmation.html':
      '<p>Your code to make this the address of your account at {{tenant_name}} is</p>' +
      '<p style="font-size:24px;letter-spacing:4px"><strong>{{code}}</strong></p>' +
      '<p>It expires in {{expires_minutes}} minutes. If you did ' +
      'not ask for it, ignore this message: nothing changes.</p>',
    'mail.email_in_use.subject': 'Someone asked to use your address',
    'mail.email_in_use.text':
      'Someone signed in to another account at {{issuer_host}} asked to move it to this address.\n\n' +
      'This address already belongs to your account, so nothing was changed and no code was sent.\n' +
      'If you asked for it: sign in with this address, or choose another address.\n',
    'mail.email_in_use.html':
      '<p>Someone signed in to another account at {{tenant_name}} asked to move it to this address.</p>' +
      '<p>This address already belongs to your account, so nothing was changed and no code was sent.</p>' +
      '<p>If you asked for it: sign in with this address, or choose another address.</p>',
    'mail.email_changed.subject': 'Your address was changed',
    'mail.email_changed.text':
      'The address of your account at {{issuer_host}} was changed from {{old_email}} to {{new_email}}.\n\n' +
      'You now sign in with the new address. If you did not make this change, contact your administrator now.\n',
    'mail.email_changed.html':
      '<p>The address of your account at {{tenant_name}} was changed from {{old_email}} to {{new_email}}.</p>' +
      '<p>You now sign in with the new address. If you did not make this change, contact your administrator now.</p>',
    'mail.email_changed_by_admin.subject': 'The email address of your {{tenant_name}} account was changed',
    'mail.email_changed_by_admin.text':
      'An administrator of {{tenant_name}} changed the email address of your account from this address ' +
      'to {{new_email_masked}}.\nMail about the account now goes to the new address.\n' +
      'If you did not expect this, contact your administrator.\n',
    'mail.email_changed_by_admin.html':
      '<p>An administrator of {{tenant_name}} changed the email address of your account from this address ' +
      'to {{new_email_masked}}.</p><p>Mail about the account now goes to the new address.</p>' +
      '<p>If you did not expect this, contact your administrator.</p>',
    'mail.approval_requested.subject': 'Approval requested: {{action}} ({{resource_class}})',
    'mail.approval_requested.text':
      'Your approval is requested for "{{action}}" on {{resource_class}}.\n' +
      'Request {{request_id}}, step {{step_key}}; it expires at {{expires_at}}.\n' +
      'Decide through your administrator (iam approvals decide).\n',
    'mail.approval_requested.html':
      '<p>Your approval is requested for "{{action}}" on {{resource_class}}.</p>' +
      '<p>Request {{request_id}}, step {{step_key}}; it expires at {{expires_at}}.</p>' +
      '<p>Decide through your administrator (iam approvals decide).</p>',
    'mail.data_export_ready.subject': 'Your data export is ready',
    'mail.data_export_ready.text':
      'The export of your data you asked for ({{export_id}}) is ready. ' +
      'Fetch it with GET /api/user/data-export/{{export_id}} within 24 hours; after that it is deleted.\n',
    'mail.data_export_ready.html':
      '<p>The export of your data you asked for ({{export_id}}) is ready.</p>' +
      '<p>Fetch it with GET /api/user/data-export/{{export_id}} within 24 hours; after that it is deleted.</p>',
    'mail.invitation.subject': 'You are invited to sign in to {{tenant_name}}',
    'mail.invitation.text':
      'An administrator of {{tenant_name}} invites you to sign in to your account at {{issuer_host}}.\n\n' +
      'Sign in here with your address, {{email}}:\n{{sign_in_url}}\n\n' +
      'You will be sent a code to this address to prove it is yours; there is no password. ' +
      'If you did not expect this, ignore this message.\n',
    'mail.invitation.html':
      '<p>An administrator of {{tenant_name}} invites you to sign in to your account.</p>' +
      '<p><a href="{{sign_in_url}}" style="color:{{primary_color}}"><strong>Sign in</strong></a> ' +
      'with your address, {{email}}.</p>' +
      '<p>You will be sent a code to this address to prove it is yours; there is no password. ' +
      'If you did not expect this, ignore this message.</p>',
  },
  de: {
    'mail.layout.support': 'Brauchen Sie Hilfe? Schreiben Sie uns:',
    'mail.sign_in_code.subject': 'Ihr Anmeldecode: {{code}}',
    'mail.sign_in_code.text':
      'Ihr Anmeldecode für {{issuer_host}} lautet {{code}}.\n\n' +
      'Er ist {{expires_minutes}} Minuten gültig. Wenn Sie ihn ' +
      'nicht angefordert haben, ignorieren Sie diese Nachricht.\n',
    'mail.sign_in_code.html':
      '<p>Ihr Anmeldecode für {{tenant_name}} lautet</p>' +
      '<p style="font-size:24px;letter-spacing:4px"><strong>{{code}}</strong></p>' +
      '<p>Er ist {{expires_minutes}} Minuten gültig. Wenn Sie ihn ' +
      'nicht angefordert haben, ignorieren Sie diese Nachricht.</p>',
    'mail.email_confirmation.subject': 'Ihr Bestätigungscode: {{code}}',
    'mail.email_confirmation.text':
      'Ihr Code, um diese Adresse zur Adresse Ihres Kontos bei {{issuer_host}} zu machen, lautet {{code}}.\n\n' +
      'Er ist {{expires_minutes}} Minuten gültig. Wenn Sie ihn ' +
      'nicht angefordert haben, ignorieren Sie diese Nachricht: ' +
      'es ändert sich nichts.\n',
    'mail.email_confirmation.html':
      '<p>Ihr Code, um diese Adresse zur Adresse Ihres Kontos bei {{tenant_name}} zu machen, lautet</p>' +
      '<p style="font-size:24px;letter-spacing:4px"><strong>{{code}}</strong></p>' +
      '<p>Er ist {{expires_minutes}} Minuten gültig. Wenn Sie ihn ' +
      'nicht angefordert haben, ignorieren Sie diese Nachricht: ' +
      'es ändert sich nichts.</p>',
    'mail.email_in_use.subject': 'Jemand möchte Ihre Adresse verwenden',
    'mail.email_in_use.text':
      'Jemand, der bei einem anderen Konto bei {{issuer_host}} ' +
      'angemeldet ist, wollte es auf diese Adresse umstellen.\n\n' +
      'Diese Adresse gehört bereits zu Ihrem Konto; es wurde nichts geändert und kein Code verschickt.\n' +
      'Falls Sie das waren: Melden Sie sich mit dieser Adresse an, oder wählen Sie eine andere Adresse.\n',
    'mail.email_in_use.html':
      '<p>Jemand, der bei einem anderen Konto bei {{tenant_name}} ' +
      'angemeldet ist, wollte es auf diese Adresse umstellen.</p>' +
      '<p>Diese Adresse gehört bereits zu Ihrem Konto; es wurde nichts geändert und kein Code verschickt.</p>' +
      '<p>Falls Sie das waren: Melden Sie sich mit dieser Adresse an, oder wählen Sie eine andere Adresse.</p>',
    'mail.email_changed.subject': 'Ihre Adresse wurde geändert',
    'mail.email_changed.text':
      'Die Adresse Ihres Kontos bei {{issuer_host}} wurde von {{old_email}} auf {{new_email}} geändert.\n\n' +
      'Sie melden sich jetzt mit der neuen Adresse an. Wenn Sie das ' +
      'nicht waren, wenden Sie sich sofort an Ihre Administration.\n',
    'mail.email_changed.html':
      '<p>Die Adresse Ihres Kontos bei {{tenant_name}} wurde von {{old_email}} auf {{new_email}} geändert.</p>' +
      '<p>Sie melden sich jetzt mit der neuen Adresse an. Wenn Sie das ' +
      'nicht waren, wenden Sie sich sofort an Ihre Administration.</p>',
    'mail.email_changed_by_admin.subject': 'Die E-Mail-Adresse Ihres Kontos bei {{tenant_name}} wurde geändert',
    'mail.email_changed_by_admin.text':
      'Eine Administratorin oder ein Administrator von ' +
      '{{tenant_name}} hat die E-Mail-Adresse Ihres Kontos von dieser ' +
      'Adresse auf {{new_email_masked}} geändert.\nNachrichten zum Konto gehen jetzt an die neue Adresse.\n' +
      'Wenn Sie das nicht erwartet haben, wenden Sie sich an Ihre Administration.\n',
    'mail.email_changed_by_admin.html':
      '<p>Eine Administratorin oder ein Administrator von ' +
      '{{tenant_name}} hat die E-Mail-Adresse Ihres Kontos von dieser ' +
      'Adresse auf {{new_email_masked}} geändert.</p><p>Nachrichten zum Konto gehen jetzt an die neue Adresse.</p>' +
      '<p>Wenn Sie das nicht erwartet haben, wenden Sie sich an Ihre Administration.</p>',
    'mail.approval_requested.subject': 'Freigabe angefragt: {{action}} ({{resource_class}})',
    'mail.approval_requested.text':
      'Ihre Freigabe wird für „{{action}}“ auf {{resource_class}} angefragt.\n' +
      'Anfrage {{request_id}}, Schritt {{step_key}}; sie läuft am {{expires_at}} ab.\n' +
      'Entscheiden Sie über Ihre Administration (iam approvals decide).\n',
    'mail.approval_requested.html':
      '<p>Ihre Freigabe wird für „{{action}}“ auf {{resource_class}} angefragt.</p>' +
      '<p>Anfrage {{request_id}}, Schritt {{step_key}}; sie läuft am {{expires_at}} ab.</p>' +
      '<p>Entscheiden Sie über Ihre Administration (iam approvals decide).</p>',
    'mail.data_export_ready.subject': 'Ihr Datenexport ist bereit',
    'mail.data_export_ready.text':
      'Der von Ihnen angeforderte Export Ihrer Daten ({{export_id}}) ist bereit. ' +
      'Rufen Sie ihn innerhalb von 24 Stunden mit GET ' +
      '/api/user/data-export/{{export_id}} ab; danach wird er gelöscht.\n',
    'mail.data_export_ready.html':
      '<p>Der von Ihnen angeforderte Export Ihrer Daten ({{export_id}}) ist bereit.</p>' +
      '<p>Rufen Sie ihn innerhalb von 24 Stunden mit GET ' +
      '/api/user/data-export/{{export_id}} ab; danach wird er gelöscht.</p>',
    'mail.invitation.subject': 'Einladung zur Anmeldung bei {{tenant_name}}',
    'mail.invitation.text':
      'Eine Administratorin oder ein Administrator von {{tenant_name}} lädt Sie ein, sich bei ' +
      '{{issuer_host}} an Ihrem Konto anzumelden.\n\n' +
      'Melden Sie sich hier mit Ihrer Adresse {{email}} an:\n{{sign_in_url}}\n\n' +
      'Sie erhalten einen Code an diese Adresse, mit dem Sie zeigen, dass sie Ihnen gehört; ein Passwort gibt es ' +
      'nicht. Wenn Sie das nicht erwartet haben, ignorieren Sie diese Nachricht.\n',
    'mail.invitation.html':
      '<p>Eine Administratorin oder ein Administrator von {{tenant_name}} lädt Sie ein, ' +
      'sich an Ihrem Konto anzumelden.</p>' +
      '<p><a href="{{sign_in_url}}" style="color:{{primary_color}}"><strong>Anmelden</strong></a> ' +
      'mit Ihrer Adresse {{email}}.</p>' +
      '<p>Sie erhalten einen Code an diese Adresse, mit dem Sie zeigen, dass sie Ihnen gehört; ein Passwort gibt es ' +
      'nicht. Wenn Sie das nicht erwartet haben, ignorieren Sie diese Nachricht.</p>',
  },
  fr: {
    'mail.layout.support': 'Besoin d’aide ? Contactez-nous :',
    'mail.sign_in_code.subject': 'Votre code de connexion : {{code}}',
    'mail.sign_in_code.text':
      'Votre code de connexion pour {{issuer_host}} est {{code}}.\n\n' +
      'Il expire dans {{expires_minutes}} minutes. Si vous ne l’avez pas demandé, ignorez ce message.\n',
    'mail.sign_in_code.html':
      '<p>Votre code de connexion pour {{tenant_name}} est</p>' +
      '<p style="font-size:24px;letter-spacing:4px"><strong>{{code}}</strong></p>' +
      '<p>Il expire dans {{expires_minutes}} minutes. Si vous ne l’avez pas demandé, ignorez ce message.</p>',
    'mail.email_confirmation.subject': 'Votre code de confirmation : {{code}}',
    'mail.email_confirmation.text':
      'Votre code pour faire de cette adresse celle de votre compte sur {{issuer_host}} est {{code}}.\n\n' +
      'Il expire dans {{expires_minutes}} minutes. Si vous ne ' +
      'l’avez pas demandé, ignorez ce message : rien ne change.\n',
    'mail.email_confirmation.html':
      '<p>Votre code pour faire de cette adresse celle de votre compte sur {{tenant_name}} est</p>' +
      '<p style="font-size:24px;letter-spacing:4px"><strong>{{code}}</strong></p>' +
      '<p>Il expire dans {{expires_minutes}} minutes. Si vous ne ' +
      'l’avez pas demandé, ignorez ce message : rien ne change.</p>',
    'mail.email_in_use.subject': 'Quelqu’un a demandé à utiliser votre adresse',
    'mail.email_in_use.text':
      'Une personne connectée à un autre compte sur {{issuer_host}} a demandé à le rattacher à cette adresse.\n\n' +
      'Cette adresse appartient déjà à votre compte : rien n’a été modifié et aucun code n’a été envoyé.\n' +
      'Si c’était vous : connectez-vous avec cette adresse, ou choisissez-en une autre.\n',
    'mail.email_in_use.html':
      '<p>Une personne connectée à un autre compte sur {{tenant_name}} a demandé à le rattacher à cette adresse.</p>' +
      '<p>Cette adresse appartient déjà à votre compte : rien n’a été modifié et aucun code n’a été envoyé.</p>' +
      '<p>Si c’était vous : connectez-vous avec cette adresse, ou choisissez-en une autre.</p>',
    'mail.email_changed.subject': 'Votre adresse a été modifiée',
    'mail.email_changed.text':
      'L’adresse de votre compte sur {{issuer_host}} est passée de {{old_email}} à {{new_email}}.\n\n' +
      'Vous vous connectez désormais avec la nouvelle adresse. Si vous n’êtes pas à l’origine de ce changement, ' +
      'contactez immédiatement votre administrateur.\n',
    'mail.email_changed.html':
      '<p>L’adresse de votre compte sur {{tenant_name}} est passée de {{old_email}} à {{new_email}}.</p>' +
      '<p>Vous vous connectez désormais avec la nouvelle adresse. Si vous n’êtes pas à l’origine de ce changement, ' +
      'contactez immédiatement votre administrateur.</p>',
    'mail.email_changed_by_admin.subject': 'L’adresse e-mail de votre compte {{tenant_name}} a été modifiée',
    'mail.email_changed_by_admin.text':
      'Un administrateur de {{tenant_name}} a remplacé l’adresse e-mail de votre compte, cette adresse-ci, ' +
      'par {{new_email_masked}}.\nLes messages concernant le compte sont désormais envoyés à la nouvelle adresse.\n' +
      'Si vous ne vous y attendiez pas, contactez votre administrateur.\n',
    'mail.email_changed_by_admin.html':
      '<p>Un administrateur de {{tenant_name}} a remplacé l’adresse e-mail de votre compte, cette adresse-ci, ' +
      'par {{new_email_masked}}.</p><p>Les messages concernant le ' +
      'compte sont désormais envoyés à la nouvelle adresse.</p>' +
      '<p>Si vous ne vous y attendiez pas, contactez votre administrateur.</p>',
    'mail.approval_requested.subject': 'Approbation demandée : {{action}} ({{resource_class}})',
    'mail.approval_requested.text':
      'Votre approbation est demandée pour « {{action}} » sur {{resource_class}}.\n' +
      'Demande {{request_id}}, étape {{step_key}} ; elle expire le {{expires_at}}.\n' +
      'Décidez par l’intermédiaire de votre administrateur (iam approvals decide).\n',
    'mail.approval_requested.html':
      '<p>Votre approbation est demandée pour « {{action}} » sur {{resource_class}}.</p>' +
      '<p>Demande {{request_id}}, étape {{step_key}} ; elle expire le {{expires_at}}.</p>' +
      '<p>Décidez par l’intermédiaire de votre administrateur (iam approvals decide).</p>',
    'mail.data_export_ready.subject': 'Votre export de données est prêt',
    'mail.data_export_ready.text':
      'L’export de vos données que vous avez demandé ({{export_id}}) est prêt. ' +
      'Récupérez-le avec GET /api/user/data-export/{{export_id}} dans les 24 heures ; il sera ensuite supprimé.\n',
    'mail.data_export_ready.html':
      '<p>L’export de vos données que vous avez demandé ({{export_id}}) est prêt.</p>' +
      '<p>Récupérez-le avec GET /api/user/data-export/{{export_id}} dans les 24 heures ; il sera ensuite supprimé.</p>',
    'mail.invitation.subject': 'Invitation à vous connecter à {{tenant_name}}',
    'mail.invitation.text':
      'Un administrateur de {{tenant_name}} vous invite à vous connecter à votre compte sur {{issuer_host}}.\n\n' +
      'Connectez-vous ici avec votre adresse, {{email}} :\n{{sign_in_url}}\n\n' +
      'Un code vous sera envoyé à cette adresse pour prouver qu’elle est la vôtre ; il n’y a pas de mot de passe. ' +
      'Si vous ne vous y attendiez pas, ignorez ce message.\n',
    'mail.invitation.html':
      '<p>Un administrateur de {{tenant_name}} vous invite à vous connecter à votre compte.</p>' +
      '<p><a href="{{sign_in_url}}" style="color:{{primary_color}}"><strong>Se connecter</strong></a> ' +
      'avec votre adresse, {{email}}.</p>' +
      '<p>Un code vous sera envoyé à cette adresse pour prouver qu’elle est la vôtre ; il n’y a pas de mot de passe. ' +
      'Si vous ne vous y attendiez pas, ignorez ce message.</p>',
  },
};
