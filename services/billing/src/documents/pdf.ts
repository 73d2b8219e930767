import PDFDocument from 'pdfkit';
import { fontOf, fontRuns, type FontName } from './fonts';
import { buyerLines, formatDate, formatDecimal, formatMinor, formatQuantity, sellerLines, totalRows, type DocumentModel } from './model';
import { breakdownRows, isInclusive, isTaxed, lineRates, taxNotices } from './tax';

const LEFT = 50;
const RIGHT = 545;
const BOTTOM = 780;
/** Columns of the lines table: description, quantity, unit amount, discount, amount. */
const COLS = [
  { x: LEFT, w: 195 },
  { x: 250, w: 55 },
  { x: 310, w: 85 },
  { x: 400, w: 65 },
  { x: 470, w: 75 },
];
/** A taxed invoice's columns (docs/api/taxes.md#documents): description, quantity, unit amount, discount, tax, amount. */
const TAXED_COLS = [
  { x: LEFT, w: 150 },
  { x: 205, w: 45 },
  { x: 255, w: 75 },
  { x: 335, w: 60 },
  { x: 400, w: 65 },
  { x: 470, w: 75 },
];

interface Cell {
  text: string;
  x: number;
  w: number;
  bold?: boolean;
  align?: 'left' | 'right';
  size?: number;
  color?: string;
}

/**
 * The invoice PDF (ADR 0045), A4, with its fonts embedded (subsets). Deterministic: the same
 * model gives the same bytes: every date is the invoice's (CreationDate is `finalized_at`, and
 * pdfkit derives the trailer's /ID from the info dictionary), nothing of the render's time.
 */
export function renderPdf(m: DocumentModel): Promise<Buffer> {
  const i = m.invoice;
  const issued = new Date(i.finalized_at ?? i.created_at);
  const doc = new PDFDocument({
    size: 'A4',
    margin: LEFT,
    autoFirstPage: true,
    info: {
      Title: `Invoice ${i.invoice_number ?? i.id}`,
      Author: m.seller?.company_name ?? 'Billstream',
      Creator: 'Billstream',
      Producer: 'Billstream (pdfkit)',
      CreationDate: issued,
      ModDate: issued,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const registered = new Set<FontName>();
  const use = (name: FontName) => {
    // The CJK font only when a text of the document needs it: registered at its first run.
    // The font given parsed (pdfkit 0.20 takes a fontkit font: `typeof src.layout === 'function'`),
    // the one fonts.ts keeps: parsing the file per document was most of a render's CPU
    // (a 50-line invoice: about 210 ms of CPU before, 30-55 ms after, on AMD EPYC); the bytes are the same.
    if (!registered.has(name)) {
      doc.registerFont(name, fontOf(name).font as unknown as PDFKit.Mixins.PDFFontSource);
      registered.add(name);
    }
    return doc.font(name);
  };
  use('sans');
  use('sans-bold');
  if (needsCjk(m)) use('cjk');

  const money = (amount: number) => formatMinor(amount, i.currency);
  let y = 50;
  const ensure = (height: number) => {
    if (y + height > BOTTOM) {
      doc.addPage();
      y = 50;
    }
  };
  /** One cell: its text in runs of the fonts that have the glyphs; answers its height. */
  const cell = (c: Cell, at: number): number => {
    // A right-aligned text of several lines (a tax cell: rates, then tax) goes a line at a time: pdfkit's continued runs would overlap them.
    if (c.align === 'right' && c.text.includes('\n')) {
      let lineAt = at;
      for (const part of c.text.split('\n')) lineAt += cell({ ...c, text: part }, lineAt);
      return lineAt - at;
    }
    const size = c.size ?? 9;
    const latin = c.bold ? 'sans-bold' : 'sans';
    const runs = fontRuns(c.text, latin);
    doc.fillColor(c.color ?? '#111827').fontSize(size);
    const height = doc.font(latin).heightOfString(c.text || ' ', { width: c.w });
    runs.forEach((r, k) => {
      use(r.font);
      const options = { width: c.w, align: c.align ?? 'left', continued: k < runs.length - 1, lineGap: 1 } as const;
      if (k === 0) doc.text(r.text, c.x, at, options);
      else doc.text(r.text, options);
    });
    if (runs.length === 0) doc.font(latin).text('', c.x, at, { width: c.w });
    return height;
  };
  const row = (cells: Cell[], gap = 4) => {
    const height = Math.max(...cells.map((c) => doc.font(c.bold ? 'sans-bold' : 'sans').fontSize(c.size ?? 9).heightOfString(c.text || ' ', { width: c.w })));
    ensure(height + gap);
    const drawn = cells.map((c) => cell(c, y));
    y += Math.max(height, ...drawn) + gap;
  };
  const rule = (weight = 0.5) => {
    doc.moveTo(LEFT, y).lineTo(RIGHT, y).lineWidth(weight).strokeColor('#9ca3af').stroke();
    y += 6;
  };

  // Header: the seller at the left, the invoice's number and dates at the right.
  const headerTop = y;
  cell({ text: 'INVOICE', x: 345, w: 200, bold: true, size: 20, align: 'right' }, headerTop);
  const meta: Array<[string, string]> = [
    ['Number', i.invoice_number ?? ''],
    ['Issue date', formatDate(i.finalized_at)],
    ['Due date', formatDate(i.due_date)],
  ];
  if (i.period_start) meta.push(['Period', `${formatDate(i.period_start)} – ${formatDate(i.period_end)}`]);
  let metaY = headerTop + 30;
  for (const [label, value] of meta) {
    cell({ text: label, x: 345, w: 70, color: '#6b7280' }, metaY);
    cell({ text: value, x: 415, w: 130, align: 'right' }, metaY);
    metaY += 14;
  }
  let sellerY = headerTop;
  sellerY += cell({ text: m.seller?.company_name ?? '', x: LEFT, w: 280, bold: true, size: 14 }, sellerY) + 2;
  for (const l of sellerLines(m.seller)) sellerY += cell({ text: l, x: LEFT, w: 280 }, sellerY);
  y = Math.max(metaY, sellerY) + 10;
  rule(1);

  // The buyer.
  row([{ text: 'BILL TO', x: LEFT, w: 280, color: '#6b7280', size: 8 }], 2);
  row([{ text: m.buyer.name ?? m.buyer.external_id ?? m.buyer.id, x: LEFT, w: 400, bold: true, size: 11 }], 2);
  for (const l of buyerLines(m.buyer, i)) row([{ text: l, x: LEFT, w: 400 }], 1);
  y += 12;

  // The lines; a taxed invoice's have a tax column (the rates, the tax) and mark an inclusive amount.
  const taxed = isTaxed(i);
  const cols = taxed ? TAXED_COLS : COLS;
  const heads = taxed ? ['Description', 'Quantity', 'Unit amount', 'Discount', 'Tax', 'Amount'] : ['Description', 'Quantity', 'Unit amount', 'Discount', 'Amount'];
  row(heads.map((h, k) => ({ text: h, x: cols[k]!.x, w: cols[k]!.w, bold: true, size: 8, align: k === 0 ? 'left' : 'right', color: '#374151' })), 2);
  rule();
  for (const l of i.line_items) {
    const description = l.period_start ? `${l.description}\n${formatDate(l.period_start)} – ${formatDate(l.period_end)}` : l.description;
    const texts = [
      description,
      formatQuantity(l.quantity),
      formatDecimal(l.unit_amount, i.currency),
      l.discount_amount ? money(-l.discount_amount) : '',
      ...(taxed ? [l.taxes.length ? `${lineRates(l)}\n${money(l.tax_amount)}` : lineRates(l)] : []),
      isInclusive(l) ? `${money(l.amount)}\nincl. tax` : money(l.amount),
    ];
    row(texts.map((text, k) => ({ text, x: cols[k]!.x, w: cols[k]!.w, align: k === 0 ? 'left' : 'right' })));
  }
  rule();

  // Totals.
  for (const t of totalRows(i)) {
    row(
      [
        { text: t.label, x: 300, w: 130, bold: t.strong },
        { text: money(t.amount), x: 430, w: 115, align: 'right', bold: t.strong },
      ],
      3,
    );
  }
  const section = (title: string, lines: string[][]) => {
    if (lines.length === 0) return;
    y += 10;
    row([{ text: title, x: LEFT, w: 300, bold: true, size: 10 }], 3);
    for (const l of lines) row(l.map((text, k) => ({ text, x: LEFT + [0, 90, 200, 330][k]!, w: k === 3 ? 165 : 105, align: k === 3 ? 'right' : 'left' })), 2);
  };
  if (taxed && i.tax_breakdown.length) {
    y += 10;
    row([{ text: 'Tax breakdown', x: LEFT, w: 300, bold: true, size: 10 }], 3);
    const at = [
      { x: LEFT, w: 200 },
      { x: 255, w: 75 },
      { x: 335, w: 100 },
      { x: 445, w: 100 },
    ];
    row(['Rate', 'Percentage', 'Taxable amount', 'Tax'].map((h, k) => ({ text: h, ...at[k]!, bold: true, size: 8, align: k === 0 ? 'left' : 'right', color: '#374151' })), 2);
    for (const b of breakdownRows(i)) row([b.rate, b.percentage, money(b.taxable), money(b.tax)].map((text, k) => ({ text, ...at[k]!, align: k === 0 ? 'left' : 'right' })), 2);
  }
  for (const n of taxNotices(i, m.seller)) {
    y += 10;
    row([{ text: n.title, x: LEFT, w: RIGHT - LEFT, bold: true, size: 10 }], 2);
    row([{ text: n.text, x: LEFT, w: RIGHT - LEFT }]);
  }
  section(
    'Discounts',
    i.discounts.map((d) => [d.discount_id, '', '', money(-d.amount)]),
  );
  section(
    'Payments',
    m.payments.map((p) => [formatDate(p.date), p.method, p.reference ?? '', money(p.amount)]),
  );
  section(
    'Credit notes',
    m.creditNotes.map((n) => [n.number, formatDate(n.date), n.reason, money(-(taxed ? n.total ?? n.amount : n.amount))]),
  );
  if (m.seller?.footer) {
    y += 16;
    row([{ text: m.seller.footer, x: LEFT, w: RIGHT - LEFT, color: '#6b7280', size: 8 }]);
  }
  doc.end();
  return done;
}

/** Whether any text of the document has a glyph the Latin font lacks. */
function needsCjk(m: DocumentModel): boolean {
  const texts = [
    m.seller?.company_name ?? '',
    m.seller?.address ?? '',
    m.seller?.footer ?? '',
    m.seller?.tax_id ?? '',
    m.seller?.reverse_charge_text ?? '',
    m.buyer.name ?? '',
    m.buyer.email ?? '',
    m.buyer.external_id ?? '',
    ...m.buyer.address,
    ...m.invoice.line_items.map((l) => l.description),
    ...m.invoice.discounts.map((d) => d.discount_id),
    ...m.payments.map((p) => p.reference ?? ''),
  ];
  return texts.some((t) => fontRuns(t, 'sans').some((r) => r.font === 'cjk'));
}
