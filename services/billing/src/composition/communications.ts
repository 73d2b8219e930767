/**
 * Invoice email's composition (ADR 0067): the recorder documents/ writes through in its
 * transactions, the sender job (SMTP_URL; none without it), the communications route.
 */
import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { PORTAL_EMAIL_LINK_TTL_MS, portalEmailLinkKey, portalEmailLinkUrl, signPortalEmailLink } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Express } from 'express';
import { EmailRecorder } from '../communications/recorder';
import { mountCommunicationRoutes } from '../communications/routes';
import { EmailSender } from '../communications/sender';
import { EmailStore } from '../communications/store';
import type { BillingSettings } from '../config';
import type { CustomerStore } from '../customers/store';
import { DocumentStore } from '../documents/store';
import type { InvoiceStore } from '../invoices/store';
import { SettingsStore } from '../settings/store';

/** The email's portal link: a signed entry to the customer's portal, 7 days from the message (ADR 0067). */
function portalLinks(publicBaseUrl: string, internalToken: string) {
  const key = portalEmailLinkKey(internalToken);
  return (email: { tenantId: string; environmentId: string }, customerId: string, now: Date) =>
    portalEmailLinkUrl(publicBaseUrl, signPortalEmailLink(key, { tenantId: email.tenantId, environmentId: email.environmentId, customerId, expiresAt: now.getTime() + PORTAL_EMAIL_LINK_TTL_MS }));
}

export interface CommunicationComposition {
  recorder: EmailRecorder;
  sender: EmailSender;
  mount(app: Express): void;
}

export function composeCommunications(
  base: { db: Db; logger: Logger; clock: () => Date; settings: BillingSettings; internalToken: string },
  services: { invoices: InvoiceStore; customers: CustomerStore; pdf: (scope: Scope, invoiceId: string) => Promise<Buffer> },
): CommunicationComposition {
  const { db, logger, clock, settings } = base;
  const emails = new EmailStore();
  const sender = new EmailSender({
    db,
    emails,
    invoices: services.invoices,
    documents: new DocumentStore(),
    pdf: services.pdf,
    smtpUrl: settings.smtpUrl,
    logger,
    clock,
    pollMs: settings.emailPollMs,
    maxAttempts: settings.emailMaxAttempts,
    retryBaseMs: settings.emailRetryBaseMs,
    portalLink: portalLinks(settings.publicBaseUrl, base.internalToken),
  });
  const recorder = new EmailRecorder({ emails, settings: new SettingsStore(), customers: services.customers, clock, poke: () => sender.poke() });
  return { recorder, sender, mount: (app) => mountCommunicationRoutes(app, { db, invoices: services.invoices, emails }, logger) };
}
