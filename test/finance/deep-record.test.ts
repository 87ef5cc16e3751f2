/**
 * Records handed to `publish` whose fields nest tens of thousands of arrays deep: each is an
 * invalid record naming its index and field, the valid ones are sent, and nothing overflows the
 * stack (validation, the report, the error's JSON).
 */
import { inspect } from 'node:util';
import { checkFinanceRecord, RecordValidationError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

const DEPTH = 50_000;
/** Typed `never` so that it fits any field: untyped input reaches publish in any shape. */
const deep = (): never => JSON.parse(`${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`) as never;

describe('a record nested too deep', () => {
  it('is skipped as invalid, naming its field, and the valid records are sent', async () => {
    const service = await start();
    const records = [
      SAMPLE_RECORD,
      { ...SAMPLE_RECORD, vendor: deep() },
      { ...SAMPLE_RECORD, extra: deep() },
      SAMPLE_RECORD,
    ];
    const report = await service.client().finance.publish(HOSTILE_APP_ID, records, { onInvalid: 'skip' });
    expect(report).toMatchObject({ recordsSent: 2, recordsInvalid: 2 });
    const invalid = report.invalid.map((record) => ({ index: record.index, fields: record.issues.map((i) => i.path) }));
    expect(invalid).toEqual([
      { index: 1, fields: ['vendor'] },
      { index: 2, fields: ['extra'] },
    ]);
    expect(JSON.stringify(report)).toContain('"recordsSent":2');
  });

  it("with onInvalid 'throw', is a RecordValidationError that serializes, and nothing is sent", async () => {
    const service = await start();
    const error = await service
      .client()
      .finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD, { ...SAMPLE_RECORD, amount: deep() }])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RecordValidationError);
    expect((error as RecordValidationError).invalid).toEqual([
      { index: 1, issues: [{ path: 'amount', message: expect.any(String) }] },
    ]);
    expect(JSON.stringify(error)).toContain('record 1: amount');
    expect(inspect(error)).toContain('RecordValidationError');
    expect(service.on('finance')).toHaveLength(0);
  });

  it('checkFinanceRecord says invalid, naming the field', async () => {
    const check = await checkFinanceRecord({ ...SAMPLE_RECORD, description: deep() });
    expect(check).toMatchObject({ ok: false, issues: [{ path: 'description' }] });
  });
});
