/**
 * A customer's own pipeline code: invoices from a billing system go to the Push API as finance
 * records. `pipeline.test.ts` next to it shows how to test such code with `createPushApiMock`.
 */
import type { FinanceRecordInput, PushClient } from 'push-api-client';

/** An invoice as the billing system exports it. */
export interface Invoice {
  id: string;
  issuedAt: string;
  totalCents: number;
  currency: string;
  customerEmail: string;
  supplier: string;
}

export interface SyncResult {
  sent: number;
  /** Ids of invoices the SDK found invalid; they were not sent. */
  rejected: string[];
  /** Ids of invoices that failed or whose outcome is unknown; safe to retry later. */
  unsent: string[];
}

export function toFinanceRecord(invoice: Invoice): FinanceRecordInput {
  return {
    created: invoice.issuedAt,
    amount: invoice.totalCents / 100,
    currency: invoice.currency,
    identifier: invoice.customerEmail,
    type: 'invoice',
    vendor: invoice.supplier,
    transactionNumber: invoice.id,
  };
}

/** Sends every valid invoice; reports the invalid and unsent ones by id instead of throwing. */
export async function syncInvoices(client: PushClient, appId: string, invoices: Invoice[]): Promise<SyncResult> {
  const report = await client.finance.publish(appId, invoices.map(toFinanceRecord), { onInvalid: 'skip' });
  const idAt = (index: number) => invoices[index]?.id ?? `#${index}`;
  const unsent = report.batches
    .filter((batch) => batch.status !== 'sent')
    .flatMap((batch) =>
      Array.from({ length: batch.lastRecord - batch.firstRecord + 1 }, (_, i) => batch.firstRecord + i),
    )
    .filter((index) => !report.invalid.some((invalid) => invalid.index === index))
    .map(idAt);
  return { sent: report.recordsSent, rejected: report.invalid.map((invalid) => idAt(invalid.index)), unsent };
}
