import { z } from 'zod';
import { listResponse, metadataSchema, paginationQuery, queryBoolean } from '../common';
import { requireCustomerForChildren } from './invoices';
import { defineRoute, type RouteDef } from '../routes';

/** Credit notes (docs/api/credit-notes.md, issue #31): money of a finalized or paid invoice taken back. */
export const CREDIT_NOTE_REASONS = ['DUPLICATE', 'FRAUDULENT', 'ORDER_CHANGE', 'PRODUCT_UNSATISFACTORY', 'OTHER'] as const;
export const CREDIT_NOTE_REFUNDS = ['WALLET', 'OFFLINE', 'NONE'] as const;
export const CREDIT_NOTE_STATUSES = ['issued', 'void'] as const;
export const CREDIT_NOTE_ORIGINS = ['MANUAL', 'INVOICE_VOID'] as const;
export const CREDIT_NOTE_REFUND_STATUSES = ['none', 'pending', 'succeeded'] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];
export type CreditNoteRefund = (typeof CREDIT_NOTE_REFUNDS)[number];
export type CreditNoteStatus = (typeof CREDIT_NOTE_STATUSES)[number];
export type CreditNoteOrigin = (typeof CREDIT_NOTE_ORIGINS)[number];
export type CreditNoteRefundStatus = (typeof CREDIT_NOTE_REFUND_STATUSES)[number];

const id = z.string().min(1).max(255);
const idParams = z.strictObject({ id });
/** The body of a call that takes none: `{}` or no body; any field is 400 naming it, before any lookup. */
const emptyBody = z.strictObject({});
const minorAmount = z
  .number({ error: 'must be an integer in minor units of the invoice currency' })
  .int('must be an integer in minor units')
  .min(1, 'must be at least 1')
  .max(Number.MAX_SAFE_INTEGER);

export const createCreditNoteBody = z
  .strictObject({
    invoice_id: id,
    reason: z.enum(CREDIT_NOTE_REASONS, { error: 'must be DUPLICATE, FRAUDULENT, ORDER_CHANGE, PRODUCT_UNSATISFACTORY or OTHER' }),
    memo: z.string().max(1000, 'must be at most 1000 characters').optional(),
    /** What each line gives back; or `amount`, spread by what each line can take. */
    lines: z
      .array(z.strictObject({ invoice_line_item_id: id, amount: minorAmount }))
      .min(1, 'must hold at least one line')
      .max(1000)
      .optional(),
    amount: minorAmount.optional(),
    /** How money received is given back: WALLET (the PRE_PAID wallet), OFFLINE (outside Billstream), NONE (default: none may be due). */
    refund: z.enum(CREDIT_NOTE_REFUNDS, { error: 'must be WALLET, OFFLINE or NONE' }).optional(),
    idempotency_key: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
    metadata: metadataSchema.optional(),
  })
  .superRefine((v, ctx) => {
    if ((v.lines === undefined) === (v.amount === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['lines'], message: 'exactly one of lines and amount is required' });
    }
    const seen = new Set<string>();
    for (const [i, l] of (v.lines ?? []).entries()) {
      if (seen.has(l.invoice_line_item_id)) ctx.addIssue({ code: 'custom', path: ['lines', i, 'invoice_line_item_id'], message: 'names a line already given' });
      seen.add(l.invoice_line_item_id);
    }
  })
  .meta({ examples: [{ invoice_id: 'inv_01JDQ8Z6Y4K2M9N3P5R7T9V1X3', reason: 'PRODUCT_UNSATISFACTORY', amount: 1250, refund: 'WALLET' }] });
export type CreateCreditNoteBody = z.output<typeof createCreditNoteBody>;

export const listCreditNotesQuery = z
  .strictObject({
    ...paginationQuery,
    invoice_id: id.optional(),
    customer_id: id.optional(),
    status: z.enum(CREDIT_NOTE_STATUSES).optional(),
    /** With `customer_id`: its descendants' credit notes too, each once (docs/api/hierarchy-billing.md#lists-with-include_children). */
    include_children: queryBoolean.optional(),
  })
  .superRefine((q, ctx) => requireCustomerForChildren(q, ctx));
export type ListCreditNotesQuery = z.output<typeof listCreditNotesQuery>;

export const creditNoteLineSchema = z.object({
  id: z.string(),
  invoice_line_item_id: z.string(),
  /** In the invoice line's terms: tax included when the line is inclusive. */
  amount: z.number().int(),
  /** What it returns of the line's tax: per rate, cumulative over the line's notes (docs/api/taxes.md#arithmetic). */
  tax_amount: z.number().int(),
  taxes: z.array(z.object({ tax_rate_id: z.string(), amount: z.number().int() })),
});

export const creditNoteSchema = z.object({
  id: z.string(),
  credit_note_number: z.string(),
  invoice_id: z.string(),
  customer_id: z.string(),
  currency: z.string(),
  reason: z.enum(CREDIT_NOTE_REASONS),
  memo: z.string().nullable(),
  /** Σ lines[].amount, in minor units (in the lines' terms). */
  amount: z.number().int(),
  /** Σ lines[].tax_amount. */
  tax_amount: z.number().int(),
  /** What the note gives back: amount plus the tax of exclusive lines = pre_payment_amount + wallet_amount + refund_amount. */
  total: z.number().int(),
  lines: z.array(creditNoteLineSchema),
  refund: z.enum(CREDIT_NOTE_REFUNDS),
  status: z.enum(CREDIT_NOTE_STATUSES),
  origin: z.enum(CREDIT_NOTE_ORIGINS),
  /** Taken off what was still due. */
  pre_payment_amount: z.number().int(),
  /** Given back to the wallets that paid (credits applied, then CREDITS payments). */
  wallet_amount: z.number().int(),
  /** Money received given back: to the PRE_PAID wallet (WALLET) or outside (OFFLINE). */
  refund_amount: z.number().int(),
  /** Whether the wallet credit of wallet_amount (and a WALLET refund) is done: none when nothing goes to a wallet. */
  refund_status: z.enum(CREDIT_NOTE_REFUND_STATUSES),
  wallet_transaction_id: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  voided_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
});

/** Credit notes (issue #31), owned by the billing service. */
export const creditNoteApi = {
  createCreditNote: defineRoute({
    operationId: 'createCreditNote',
    method: 'post',
    path: '/v1/credit_notes',
    service: 'billing',
    permission: 'credit_notes:write',
    summary: 'Issue a credit note on a finalized or paid invoice: lowers what is due, gives wallet money back, refunds money paid',
    tag: 'Credit notes',
    body: createCreditNoteBody,
    response: creditNoteSchema,
    status: 201,
    errors: [404, 409],
  }),
  listCreditNotes: defineRoute({
    operationId: 'listCreditNotes',
    method: 'get',
    path: '/v1/credit_notes',
    service: 'billing',
    permission: 'credit_notes:read',
    summary: 'List credit notes, oldest first, by invoice, customer or status',
    tag: 'Credit notes',
    query: listCreditNotesQuery,
    response: listResponse(creditNoteSchema),
    status: 200,
  }),
  getCreditNote: defineRoute({
    operationId: 'getCreditNote',
    method: 'get',
    path: '/v1/credit_notes/:id',
    service: 'billing',
    permission: 'credit_notes:read',
    summary: 'One credit note with its lines',
    tag: 'Credit notes',
    params: idParams,
    response: creditNoteSchema,
    status: 200,
    errors: [404],
  }),
  voidCreditNote: defineRoute({
    operationId: 'voidCreditNote',
    method: 'post',
    path: '/v1/credit_notes/:id/void',
    service: 'billing',
    permission: 'credit_notes:write',
    summary: 'Void a credit note that gave no money back: what it took off the amount due is due again',
    tag: 'Credit notes',
    params: idParams,
    body: emptyBody,
    response: creditNoteSchema,
    status: 200,
    errors: [404],
  }),
};

export const creditNoteRoutes: RouteDef[] = Object.values(creditNoteApi) as RouteDef[];
