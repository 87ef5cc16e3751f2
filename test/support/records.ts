/** One valid finance record, as a user writes it (a date string for `created`). */
export const SAMPLE_RECORD = {
  created: '2025-01-31',
  amount: 42,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
} as const;
