// The consumer's own code under test: uploads the day's users file and publishes its expenses.
import { type FinanceRecordInput, PushClient, type PushClientOptions } from 'push-api-client';

export interface Expense {
  id: string;
  day: string;
  euros: number;
  employee: string;
  vendor: string;
}

export async function syncExpenses(
  options: PushClientOptions,
  appId: string,
  expenses: Expense[],
): Promise<{ uploaded: number; sent: number }> {
  const client = new PushClient(options);
  const users = ['email', ...new Set(expenses.map((expense) => expense.employee))].join('\n');
  const upload = await client.uploads.upload(appId, [{ name: 'users.csv', data: `${users}\n` }], { type: 'users' });
  const records: FinanceRecordInput[] = expenses.map((expense) => ({
    created: expense.day,
    amount: expense.euros,
    currency: 'EUR',
    identifier: expense.employee,
    type: 'expense',
    vendor: expense.vendor,
    transactionNumber: expense.id,
  }));
  const report = await client.finance.publish(appId, records);
  return { uploaded: upload.filesUploaded, sent: report.recordsSent };
}
