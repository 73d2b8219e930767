import type { InvoiceResponse, Scope } from '@billstream/contracts';
import type { Conn, Trx } from '@billstream/db';
import type { InvoiceSettings } from '../settings/store';
import type { Buyer, PaymentEntry } from './model';

/** What an invoice's documents keep from its finalization (ADR 0045), and the PDF once rendered. */
export interface DocumentSnapshot {
  invoiceId: string;
  tenantId: string;
  environmentId: string;
  invoice: InvoiceResponse;
  seller: InvoiceSettings | null;
  buyer: Buyer;
  payments: PaymentEntry[];
  pdf: Buffer | null;
  createdAt: Date;
}

interface Row {
  invoice_id: string;
  tenant_id: string;
  environment_id: string;
  invoice: InvoiceResponse;
  seller: InvoiceSettings | null;
  buyer: Buyer;
  payments: PaymentEntry[];
  pdf: Buffer | null;
  created_at: Date;
}

const fromRow = (r: Row): DocumentSnapshot => ({
  invoiceId: r.invoice_id,
  tenantId: r.tenant_id,
  environmentId: r.environment_id,
  invoice: r.invoice,
  seller: r.seller,
  buyer: r.buyer,
  payments: r.payments,
  // PGlite answers a bytea as a Uint8Array, node-postgres as a Buffer.
  pdf: r.pdf === null ? null : Buffer.from(r.pdf),
  createdAt: r.created_at,
});

/** `invoice_documents`, `invoice_communications` and `invoice_document_links`. */
export class DocumentStore {
  /** Records snapshots in one statement; one already there (a repeated finalization's) is kept as it is. */
  async insertMany(conn: Conn, snapshots: Omit<DocumentSnapshot, 'pdf'>[]): Promise<void> {
    if (snapshots.length === 0) return;
    await conn('invoice_documents')
      .insert(
        snapshots.map((s) => ({
          invoice_id: s.invoiceId,
          tenant_id: s.tenantId,
          environment_id: s.environmentId,
          invoice: JSON.stringify(s.invoice),
          seller: s.seller === null ? null : JSON.stringify(s.seller),
          buyer: JSON.stringify(s.buyer),
          payments: JSON.stringify(s.payments),
          created_at: s.createdAt,
        })),
      )
      .onConflict('invoice_id')
      .ignore();
  }

  async getById(conn: Conn, invoiceId: string): Promise<DocumentSnapshot | undefined> {
    const row = await conn<Row>('invoice_documents').where({ invoice_id: invoiceId }).first();
    return row && fromRow(row as Row);
  }

  /** Stores the rendered PDF unless one is stored already; answers the stored bytes (the first render's). */
  async savePdf(conn: Conn, invoiceId: string, pdf: Buffer, at: Date): Promise<Buffer> {
    await conn('invoice_documents').where({ invoice_id: invoiceId }).whereNull('pdf').update({ pdf, rendered_at: at });
    const row = (await conn('invoice_documents').where({ invoice_id: invoiceId }).first('pdf')) as { pdf: Buffer };
    return Buffer.from(row.pdf);
  }

  async getCommunication(conn: Conn, invoiceId: string, key: string): Promise<string | undefined> {
    const row = (await conn('invoice_communications').where({ invoice_id: invoiceId, idempotency_key: key }).first('event_id')) as { event_id: string } | undefined;
    return row?.event_id;
  }

  /** Records the event of a key; false when the key was taken (by a concurrent call). */
  async insertCommunication(trx: Trx, invoiceId: string, key: string, eventId: string, at: Date): Promise<boolean> {
    const rows = await trx('invoice_communications').insert({ invoice_id: invoiceId, idempotency_key: key, event_id: eventId, created_at: at }).onConflict(['invoice_id', 'idempotency_key']).ignore().returning('event_id');
    return rows.length > 0;
  }

  /** The generation the invoice's signed links are made with (0: never revoked; ADR 0059). */
  async generationOf(conn: Conn, invoiceId: string): Promise<number> {
    const row = (await conn('invoice_document_links').where({ invoice_id: invoiceId }).first('generation')) as { generation: number } | undefined;
    return row?.generation ?? 0;
  }

  /** Raises the invoice's generation: every link made before answers 410. Answers the new generation. */
  async revoke(trx: Trx, invoice: Scope & { id: string }, at: Date): Promise<number> {
    const [row] = (await trx('invoice_document_links')
      .insert({ invoice_id: invoice.id, tenant_id: invoice.tenantId, environment_id: invoice.environmentId, generation: 1, revoked_at: at })
      .onConflict('invoice_id')
      .merge({ generation: trx.raw('invoice_document_links.generation + 1'), revoked_at: at })
      .returning('generation')) as Array<{ generation: number }>;
    return row!.generation;
  }
}
