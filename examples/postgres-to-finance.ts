/**
 * Recipe: stream rows from a PostgreSQL table into `client.finance.publish`, in bounded memory.
 *
 * pg-query-stream reads the table through a server-side cursor, `batchSize` rows per round trip,
 * and pauses when its buffer is full. `publish` pulls records from the async iterable only as fast
 * as batches are sent, so a table of any size holds at most a few batches in memory.
 *
 *   eval "$(scripts/start-services.sh start)"      # a local PostgreSQL (or set PG_URL)
 *   npx tsx examples/postgres-to-finance.ts
 *
 * Without PUSH_* variables it publishes to the embedded emulator; it seeds a temporary demo table.
 */
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import QueryStream from 'pg-query-stream';
import { type FinanceRecordInput, type PublishOptions, type PublishReport, PushClient } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

/** The shape of the source table in this recipe; adapt the mapping to your own columns. */
export interface ExpenseRow {
  id: string;
  created_at: Date;
  /** `numeric` columns arrive as strings, so that no precision is lost on the way. */
  amount: string;
  currency: string;
  employee_email: string;
  vendor: string;
  category: string | null;
  kind: 'expense' | 'invoice';
}

export const EXPENSES_DDL = `
  id bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL,
  amount numeric(12, 2) NOT NULL,
  currency char(3) NOT NULL,
  employee_email text NOT NULL,
  vendor text NOT NULL,
  category text,
  kind text NOT NULL CHECK (kind IN ('expense', 'invoice'))`;

export function toFinanceRecord(row: ExpenseRow): FinanceRecordInput {
  return {
    created: row.created_at,
    amount: Number(row.amount),
    currency: row.currency,
    identifier: row.employee_email,
    type: row.kind,
    vendor: row.vendor,
    ...(row.category === null ? {} : { category: row.category }),
    // The primary key travels along, so that each record can be traced back to its row.
    transactionNumber: `expense-${row.id}`,
  };
}

export interface StreamOptions {
  /** Rows fetched per cursor round trip; also the stream's buffer size. @default 500 */
  batchSize?: number;
}

/** Yields one finance record per row of `table`, in primary-key order, through a cursor. */
export async function* financeRecordsFromTable(
  db: pg.ClientBase,
  table: string,
  options: StreamOptions = {},
): AsyncGenerator<FinanceRecordInput> {
  const batchSize = options.batchSize ?? 500;
  const sql = `SELECT id, created_at, amount, currency, employee_email, vendor, category, kind
               FROM ${db.escapeIdentifier(table)} ORDER BY id`;
  const stream = db.query(new QueryStream(sql, [], { batchSize, highWaterMark: batchSize }));
  try {
    for await (const row of stream) yield toFinanceRecord(row as ExpenseRow);
  } finally {
    // Closes the cursor when the consumer stops early (an abort, a thrown error).
    stream.destroy();
  }
}

/** Publishes every row of `table`; resolves with the publish report. */
export function publishTable(
  db: pg.ClientBase,
  client: PushClient,
  appId: string,
  table: string,
  options: PublishOptions & StreamOptions = {},
): Promise<PublishReport> {
  const { batchSize, ...publishOptions } = options;
  return client.finance.publish(appId, financeRecordsFromTable(db, table, { batchSize }), publishOptions);
}

/** Creates `table` (if missing) and fills it with `rows` generated rows, server-side. */
export async function seedExpenses(db: pg.ClientBase, table: string, rows: number, temporary = false): Promise<void> {
  const name = db.escapeIdentifier(table);
  await db.query(`CREATE ${temporary ? 'TEMPORARY ' : ''}TABLE IF NOT EXISTS ${name} (${EXPENSES_DDL})`);
  await db.query(
    `INSERT INTO ${name} (created_at, amount, currency, employee_email, vendor, category, kind)
     SELECT timestamptz '2025-01-01 00:00:00Z' + i * interval '1 minute',
            round((10 + (i % 97) * 1.37)::numeric, 2),
            'USD',
            'user' || (i % 50) || '@example.com',
            (ARRAY['Acme', 'Globex', 'Initech'])[1 + i % 3],
            CASE WHEN i % 7 = 0 THEN NULL ELSE 'Software:SaaS' END,
            CASE WHEN i % 5 = 0 THEN 'invoice' ELSE 'expense' END
     FROM generate_series(1, $1::int) AS i`,
    [rows],
  );
}

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const db = new pg.Client({ connectionString: process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres' });
  await db.connect();
  const usePushEnv = Object.keys(process.env).some((name) => name.startsWith('PUSH_'));
  const emulator = usePushEnv ? undefined : await startEmulator();
  try {
    // A temporary table lives as long as this connection, so the demo leaves nothing behind.
    await seedExpenses(db, 'push_demo_expenses', 5_000, true);
    const client = emulator
      ? new PushClient({
          clientId: emulator.mock.clientId,
          clientSecret: emulator.mock.clientSecret,
          authUrl: emulator.authUrl,
          baseUrl: emulator.baseUrl,
          scopeBase: emulator.mock.scopeBase,
        })
      : new PushClient();
    const appId = emulator ? emulator.mock.appId : (process.env.PUSH_APP_ID ?? '');
    const report = await publishTable(db, client, appId, 'push_demo_expenses');
    log(`${report.recordsSent} records sent in ${report.batches.length} batches, ${report.recordsFailed} failed`);
  } finally {
    await emulator?.close();
    await db.end();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
